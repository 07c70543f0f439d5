"""User text → search terms. Nothing the user types reaches MATCH/tsquery syntax unquoted.

Terms are the runs of word characters in the query (so quotes, AND/OR/NEAR operators, `*`, `-`,
`:`, parentheses and emoji are never syntax). Terms containing CJK characters are matched as
substrings (Korean particles attach to words: 세션 must find 세션을); other terms as stemmed words.
"""

import re
from dataclasses import dataclass

_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_MARKED = re.compile(r"(<mark>.*?</mark>)", re.DOTALL)
MAX_TERMS = 16
MAX_QUERY_CHARS = 1000
MARK_START, MARK_END = "<mark>", "</mark>"


@dataclass(frozen=True)
class SearchTerms:
    words: tuple[str, ...]  # stemmed word matching (English inflection, any case)
    substrings: tuple[str, ...]  # CJK substring matching

    def __bool__(self) -> bool:
        return bool(self.words or self.substrings)


def parse_terms(text: str) -> SearchTerms:
    words: list[str] = []
    substrings: list[str] = []
    for token in _WORD.findall((text or "")[:MAX_QUERY_CHARS])[:MAX_TERMS]:
        target = substrings if _CJK.search(token) else words
        if token.lower() not in target:
            target.append(token.lower())
    return SearchTerms(words=tuple(words), substrings=tuple(substrings))


def fts5_phrase(term: str) -> str:
    """One FTS5 string literal: double-quoted, inner quotes doubled (so it is never an operator)."""
    return '"' + term.replace('"', '""') + '"'


def like_pattern(term: str) -> str:
    """A LIKE pattern matching `term` anywhere, with LIKE's wildcards escaped (escape char: \\)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def mark_terms(snippet: str, terms: tuple[str, ...]) -> str:
    """Wrap each occurrence of the substring terms in <mark>, outside what the database already marked."""
    if not terms:
        return snippet
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE)
    parts = _MARKED.split(snippet)
    return "".join(
        part if part.startswith(MARK_START) else pattern.sub(lambda m: f"{MARK_START}{m[0]}{MARK_END}", part)
        for part in parts
    )
