"""User text → a search query. Nothing the user types reaches MATCH/tsquery syntax unquoted.

The syntax, the same on both backends:

* words match by English stem, any case (`parsers` finds `parser`); every word must match but for
  English stop words (`the`, `not`, …: PostgreSQL's list), which are left out on both backends;
* `"two words"` matches the words next to each other, in that order;
* `refact*` matches the words starting with `refact`; the prefix is stemmed as a word is
  (`running*` is `run*`), as FTS5's porter tokenizer does;
* `OR` (upper case) between terms: either side matches; the terms next to each other bind first
  (`a b OR c` is `(a b) OR c`);
* a term with Korean, Chinese or Japanese characters matches as a substring (Korean particles attach
  to words: 세션 finds 세션을), from one character up; so does a quoted phrase containing them.

Everything else is literal text, never syntax: other punctuation separates words, a lone `"` or `*`
is ignored, `AND`, `NOT`, `NEAR`, `-` and `:` are words or separators like any other.
"""

import html
import re
from dataclasses import dataclass
from typing import Literal

MAX_QUERY_CHARS = 1000
MAX_TERMS = 32
# Word characters as both tokenizers see them (letters and digits; `_` separates, as FTS5's unicode61
# and PostgreSQL's parser do).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CHUNK = re.compile(r'"([^"]*)"|([^\s"]+)')
_WORD_OR_PREFIX = re.compile(r"([^\W_]+)(\*?)", re.UNICODE)
_CJK = re.compile(r"[\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

# PostgreSQL's `english` stop words (tsearch_data/english.stop), which its `plainto_tsquery` drops;
# left out of SQLite's queries too, so that `the parser` means the same on both.
_STOP_WORDS_TEXT = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
it its itself they them their theirs themselves what which who whom this that these those am is are was were be
been being have has had having do does did doing a an the and but if or because as until while of at by for with
about against between into through during before after above below to from up down in out on off over under again
further then once here there when where why how all any both each few more most other some such no nor not only own
same so than too very s t can will just don should now
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

TermKind = Literal["word", "prefix", "phrase", "substring"]


@dataclass(frozen=True)
class Term:
    kind: TermKind
    text: str  # lower case; a phrase's words joined by one space


# Any group matches (OR); within a group every term must match (AND).
Group = tuple[Term, ...]


@dataclass(frozen=True)
class SearchQuery:
    groups: tuple[Group, ...]

    def __bool__(self) -> bool:
        return bool(self.groups)

    @property
    def substrings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.text for group in self.groups for t in group if t.kind == "substring"))


NO_QUERY = SearchQuery(groups=())


class QueryTooLong(ValueError):
    pass


def _phrase(text: str) -> Term | None:
    if _CJK.search(text):
        literal = " ".join(text.split()).lower()
        return Term("substring", literal) if literal else None
    words = [word.lower() for word in _WORD.findall(text)]
    if len(words) > 1:
        return Term("phrase", " ".join(words))
    return Term("word", words[0]) if words and words[0] not in STOP_WORDS else None


def _bare(chunk: str) -> list[Term]:
    terms = []
    for match in _WORD_OR_PREFIX.finditer(chunk):
        word, star = match[1].lower(), match[2]
        if _CJK.search(word):
            terms.append(Term("substring", word))  # a substring is a prefix already
        elif star:
            terms.append(Term("prefix", word))
        elif word not in STOP_WORDS:
            terms.append(Term("word", word))
    return terms


def parse_query(text: str) -> SearchQuery:
    """The query in `text`; `QueryTooLong` past MAX_QUERY_CHARS characters or MAX_TERMS terms."""
    text = text or ""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryTooLong(f"A search query is at most {MAX_QUERY_CHARS} characters long.")
    groups: list[list[Term]] = [[]]
    for match in _CHUNK.finditer(text):
        if match[2] == "OR":
            groups.append([])
            continue
        found = [term] if match[1] is not None and (term := _phrase(match[1])) else _bare(match[2] or "")
        groups[-1].extend(term for term in found if term not in groups[-1])
    kept = tuple(tuple(group) for group in groups if group)
    if sum(len(group) for group in kept) > MAX_TERMS:
        raise QueryTooLong(f"A search query has at most {MAX_TERMS} terms.")
    return SearchQuery(groups=tuple(dict.fromkeys(kept)))


def fts5_string(text: str) -> str:
    """One FTS5 string literal: double-quoted, inner quotes doubled (so it is never an operator)."""
    return '"' + text.replace('"', '""') + '"'


def like_pattern(term: str) -> str:
    """A LIKE pattern matching `term` anywhere, with LIKE's wildcards escaped (escape char: \\)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# Where a match starts and ends in a snippet from the database: private-use characters, turned into
# <mark> and </mark> once the text around them is escaped.
MATCH_START, MATCH_END = "\ue000", "\ue001"
_MATCH_MARKERS = re.compile(f"({MATCH_START}|{MATCH_END})")
# What a snippet may carry instead of < and > (PostgreSQL's ts_headline drops what looks like a tag).
TAG_STAND_INS = ("\ue002", "\ue003")
_TAGS_BACK = str.maketrans({TAG_STAND_INS[0]: "<", TAG_STAND_INS[1]: ">"})


def _mark_substrings(snippet: str, substrings: tuple[str, ...]) -> str:
    """Put the match markers around each substring term, outside what the database already marked."""
    if not substrings:
        return snippet
    pattern = re.compile("|".join(re.escape(t) for t in sorted(substrings, key=len, reverse=True)), re.IGNORECASE)
    parts = re.split(f"({MATCH_START}.*?{MATCH_END})", snippet, flags=re.DOTALL)
    return "".join(part if part.startswith(MATCH_START) else pattern.sub(lambda m: MATCH_START + m[0] + MATCH_END, part)
                   for part in parts)


def snippet_html(snippet: str, substrings: tuple[str, ...] = ()) -> str:
    """The snippet as HTML safe to insert into a page: its text escaped, `<mark>…</mark>` around the
    matches and no other markup (a marker character in the stored text can only open or close a
    mark, never leave one unbalanced)."""
    out: list[str] = []
    inside = False
    for part in _MATCH_MARKERS.split(_mark_substrings(snippet, substrings)):
        if part == MATCH_START:
            if not inside:
                out.append("<mark>")
            inside = True
        elif part == MATCH_END:
            if inside:
                out.append("</mark>")
            inside = False
        else:
            out.append(html.escape(part.translate(_TAGS_BACK), quote=True))
    if inside:
        out.append("</mark>")
    return "".join(out).replace("<mark></mark>", "")
