"""Use cases that span domain packages, on top of them all (docs/architecture.md).

Each module composes the services and repositories of the domains below it, so no domain
package imports another one above it:

* :mod:`.listing_detail`: a listing with its owner and the caller's match request (``myRequest``);
* :mod:`.listing_deletion`: delete a listing and reject its pending requests;
* :mod:`.request_decisions`: accept (opening a conversation) or reject a request;
* :mod:`.profile_detail`: a profile with the request policy and the caller's profile request;
* :mod:`.routes`: the HTTP routes of these use cases.
"""
