"""The scale set of ``bench/relevance.py``: strong matches buried under many newer weak ones.

Built from a seed at run time (:func:`build`), in three waves approved one after the other (a
wave is approved and indexed before the next is created):

1. **strong matches**: for each of the :data:`WORDS` (five words, each with a companion word),
   :data:`STRONG` mentoring listings with the word in the title and three times in the
   description, the companion twice; and the exact listing of the first unique word;
2. **newer weak matches**: ``newer`` realistic listings (:mod:`bench.corpus`, descriptions cut to
   :data:`NEWER_WORDS` words) each mentioning every word and companion once; and the one-edit
   neighbours of both unique words (:data:`NEIGHBOURS` each: a realistic listing whose title
   carries one neighbour);
3. the exact listing of the second unique word (after its neighbours).

Queries and classes (grade 2: the word's strong matches, or the unique word's exact listing;
every other listing 0): ``scale-1word`` the word; ``scale-2word`` the word and its companion;
``scale-prefix`` its first five letters; ``scale-typo`` the word with one letter replaced (a typo
class: recall@20 is budgeted too); ``scale-unique`` each unique word (its exact listing approved
before, and after, its neighbours).
"""

from __future__ import annotations

import random
import re
from typing import Any

from bench import corpus
from local_stack.cities import CITIES

#: (word, companion): real words absent from the judged set and from the corpus's vocabulary.
WORDS = [("astronomy", "telescope"), ("pottery", "ceramics"), ("violin", "orchestra"), ("sailing", "regatta"),
         ("chess", "openings")]
STRONG = 4
NEWER = 420
NEWER_WORDS = 40
#: Six-letter words no listing has but their one-edit neighbours.
UNIQUE = ("morvek", "talvin")
NEIGHBOURS = 30
_TAG = re.compile(r"<[^>]+>")


def _typo(word: str) -> str:
    """``word`` with its middle letter replaced."""
    i = len(word) // 2
    return word[:i] + ("u" if word[i] != "u" else "o") + word[i + 1 :]


def neighbours(word: str, count: int) -> list[str]:
    """``count`` distinct one-substitution neighbours of ``word``, spread over its positions."""
    out: list[str] = []
    letters = "aeioulrnst"
    for letter in letters:
        for i in range(len(word)):
            candidate = word[:i] + letter + word[i + 1 :]
            if candidate != word and candidate not in out:
                out.append(candidate)
    rng = random.Random(word)
    rng.shuffle(out)
    return out[:count]


def _mentor(n: int, word: str, companion: str, rng: random.Random) -> dict[str, Any]:
    city, _, lat, lng = CITIES[n % 10]
    sentences = [f"I teach {word} to beginners and advanced students.", f"We start with {companion} basics.",
                 f"Every session covers {word} in practice, with {companion} exercises.",
                 f"Years of {word} experience.", "First session free."]
    return {"categoryKey": "mentoring", "roleKey": "mentor", "channels": ["telegram"], "meta": {
        "title": f"{word.capitalize()} mentor: lessons and {companion} practice", "description": f"<p>{' '.join(sentences)}</p>",
        "location": city, "location_lat": f"{lat:.4f}", "location_lng": f"{lng:.4f}", "topics": "career",
        "yearsExperience": str(rng.randrange(3, 25))}}


def _with_title_word(body: dict[str, Any], word: str) -> dict[str, Any]:
    return {**body, "meta": {**body["meta"], "title": f"{body['meta']['title']} {word}"}}


def build(categories: list[dict[str, Any]], newer: int = NEWER) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]],
                                                                       dict[str, dict[str, int]]]:
    """``(waves, queries, judgments)``: waves of listings (each ``{"key", "categoryKey", "roleKey", "meta"}``)
    in approval order, the queries (``{"id", "kind", "q"}``) and their graded listing keys."""
    rng = random.Random(3838)
    strong: dict[str, list[str]] = {word: [] for word, _ in WORDS}
    wave1, wave2, wave3 = [], [], []
    for w, (word, companion) in enumerate(WORDS):
        for n in range(STRONG):
            key = f"scale-{word}-{n}"
            wave1.append({"key": key, **_mentor(w * STRONG + n, word, companion, rng)})
            strong[word].append(key)
    generic = corpus.listings(newer + 2 * NEIGHBOURS + 2, categories, seed=3839)
    mention = " ".join(f"Also {word} and {companion}." for word, companion in WORDS)
    for n in range(newer):
        body = generic[n]
        text = _TAG.sub(" ", body["meta"]["description"]).split()[:NEWER_WORDS]
        meta = {**body["meta"], "description": f"<p>{' '.join(text)} {mention}</p>"}
        wave2.append({"key": f"scale-newer-{n}", **body, "meta": meta})
    exact = {}
    for u, word in enumerate(UNIQUE):
        for m, neighbour in enumerate(neighbours(word, NEIGHBOURS)):
            wave2.append({"key": f"scale-{word}-near-{m}", **_with_title_word(generic[newer + u * NEIGHBOURS + m], neighbour)})
        exact[word] = {"key": f"scale-{word}-exact", **_with_title_word(generic[-1 - u], word)}
    wave1.append(exact[UNIQUE[0]])
    wave3.append(exact[UNIQUE[1]])
    queries, judgments = [], {}
    for word, companion in WORDS:
        grades = dict.fromkeys(strong[word], 2)
        for kind, q in (("scale-1word", word), ("scale-2word", f"{word} {companion}"), ("scale-prefix", word[:5]),
                        ("scale-typo", _typo(word))):
            qid = f"{kind}-{word}"
            queries.append({"id": qid, "kind": kind, "q": q, **({"spelt": word} if kind == "scale-typo" else {})})
            judgments[qid] = grades
    for word in UNIQUE:
        qid = f"scale-unique-{word}"
        queries.append({"id": qid, "kind": "scale-unique", "q": word})
        judgments[qid] = {f"scale-{word}-exact": 2}
    return [wave1, wave2, wave3], queries, judgments
