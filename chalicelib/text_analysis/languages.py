"""The languages the analyzer stems (a category declares one): PyStemmer's Snowball algorithms."""

from __future__ import annotations

import Stemmer

#: The language of a category that declares none (a Snowball algorithm name).
DEFAULT_LANGUAGE = "english"
#: Languages a category may declare: PyStemmer's Snowball algorithms, without the original
#: Porter variants (kept by Snowball for compatibility; Porter 2 is "english").
LANGUAGES = frozenset(Stemmer.algorithms()) - {"porter", "dutch_porter"}
