"""Users: profiles, connected channels and the admin routes that create users and keys."""
