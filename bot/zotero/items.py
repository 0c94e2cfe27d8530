"""A paper as a Zotero item, and a Zotero item as a paper record: one mapping each way.

Item types: a paper presented at a conference (its venue names one, or it has a track)
is a `conferencePaper`; one published elsewhere (a venue that is not arXiv, or only a
DOI) a `journalArticle`; the rest a `preprint`, with `archiveID` "arXiv:ID" when it has
an arXiv id. The other types keep the arXiv id in `extra` ("arXiv: ID"), as Zotero's own
translators do. Reading back, the DOI, archiveID, `extra` and the URL give the ids, so a
paper written here and read there (or imported) is the same paper.
"""

from __future__ import annotations

import html
import re
import secrets
from datetime import datetime
from typing import Any

from bot.corpus import identifiers
from bot.corpus.identifiers import ARXIV, DOI
from bot.corpus.records import PaperRecord, clean_space

TAG_PREFIX = "paperclub:"  # the tags paperclub writes and rewrites (the votes); others are left alone
READ_TAG = "read"
ZOTERO_SCHEME = "zotero"  # an imported item's own id: "GROUP/KEY"
KEY_ALPHABET = "23456789ABCDEFGHIJKLMNPQRSTUVWXYZ"  # Zotero's object keys: 8 of these

_CONFERENCE = re.compile(
    r"conference|proceedings|workshop|symposium|\b(ICLR|NeurIPS|NIPS|ICML|CVPR|ICCV|ECCV|ACL|EMNLP|NAACL|COLING|"
    r"AAAI|IJCAI|KDD|SIGIR|SIGGRAPH|WWW|COLT|AISTATS|UAI|CoRL|RSS|ICRA|IROS|ICASSP|Interspeech|WSDM|CHI)\b",
    re.I,
)
_YEAR = re.compile(r"\b(1[0-9]{3}|2[0-9]{3})\b")
_EXTRA_ARXIV = re.compile(r"^\s*arxiv\s*:\s*(\S+)", re.I | re.M)

ABSTRACT_MOST = 6_000  # characters of an abstract kept (_abstract); a long real one is ~3,000


def new_key() -> str:
    """An object key made here (Zotero accepts keys its clients make), stored before the
    write: a retried write then names the same objects."""
    return "".join(secrets.choice(KEY_ALPHABET) for _ in range(8))


def new_token() -> str:
    """A write token: 32 random characters."""
    return secrets.token_hex(16)


def item_type(ids: dict[str, str], venue: str | None, track: str | None) -> str:
    if (venue and _CONFERENCE.search(venue)) or track:
        return "conferencePaper"
    if venue and not venue.lower().startswith("arxiv"):
        return "journalArticle"
    if ARXIV not in ids and DOI in ids:
        return "journalArticle"
    return "preprint"


def paper_item(paper: Any, key: str, collection: str | None, tags: list[str]) -> dict[str, Any]:
    """The new item's JSON for a paper (a store.models.Paper)."""
    ids = paper.ids()
    kind = item_type(ids, paper.venue, paper.track)
    data: dict[str, Any] = {
        "key": key,
        "itemType": kind,
        "title": paper.title,
        "creators": [creator(name) for name in paper.authors],
        "abstractNote": paper.abstract or "",
        "date": str(paper.year) if paper.year else "",
        "url": paper.url or "",
        "DOI": ids.get(DOI, ""),
        "tags": [{"tag": t} for t in tags],
        "collections": [collection] if collection else [],
    }
    venue = paper.venue if paper.venue and not paper.venue.lower().startswith("arxiv") else ""
    if kind == "preprint":
        if ARXIV in ids:
            data.update(repository="arXiv", archiveID=f"arXiv:{ids[ARXIV]}")
    else:
        data["publicationTitle" if kind == "journalArticle" else "proceedingsTitle"] = venue
        if kind == "conferencePaper":
            data["conferenceName"] = venue
        if ARXIV in ids:
            data["extra"] = f"arXiv: {ids[ARXIV]}"
    return data


def creator(name: str) -> dict[str, str]:
    """"Ada Lovelace" or "Lovelace, Ada" as Zotero's two-field author; one word as a name."""
    name = clean_space(name)
    if "," in name:
        last, _, first = name.partition(",")
        return {"creatorType": "author", "firstName": first.strip(), "lastName": last.strip()}
    first, _, last = name.rpartition(" ")
    if not first:
        return {"creatorType": "author", "name": name}
    return {"creatorType": "author", "firstName": first, "lastName": last}


def note_item(key: str, parent: str, author: str, text: str, at: datetime) -> dict[str, Any]:
    """A member's note as a child note (Zotero keeps notes as HTML)."""
    said = "".join(f"<p>{html.escape(line)}</p>" for line in text.splitlines() if line.strip())
    return {"key": key, "itemType": "note", "parentItem": parent, "tags": [{"tag": f"{TAG_PREFIX}note"}],
            "note": f"<p><strong>{html.escape(author)}</strong> in paperclub, {at:%Y-%m-%d}:</p>{said}"}


def item_ids(data: dict[str, Any]) -> dict[str, str]:
    """The DOI and arXiv id an item names (its DOI field, archiveID, `extra`, URL)."""
    given: dict[str, str] = {}
    if data.get("DOI"):
        given[DOI] = data["DOI"]
    archive = data.get("archiveID") or ""
    found = _EXTRA_ARXIV.search(archive) or _EXTRA_ARXIV.search(data.get("extra") or "")
    if found:
        given[ARXIV] = found.group(1)
    try:
        ids = identifiers.normalise_ids(given, data.get("url") or None)
    except ValueError:
        ids = {}
    return {scheme: value for scheme, value in ids.items() if scheme in (ARXIV, DOI)}


def record_of(item: dict[str, Any], group_id: int, line: int) -> PaperRecord | None:
    """A paper record from an item of the library (None: a note, attachment or untitled item)."""
    data = item.get("data") or {}
    title = clean_space(data.get("title") or "")
    if not title or data.get("itemType") in ("note", "attachment", "annotation"):
        return None
    venue = data.get("publicationTitle") or data.get("proceedingsTitle") or data.get("conferenceName") \
        or data.get("repository") or None
    year = _YEAR.search(data.get("date") or "")
    tags = [t["tag"] for t in data.get("tags", []) if isinstance(t, dict) and t.get("tag")
            and not t["tag"].startswith(TAG_PREFIX)]
    return PaperRecord(
        title=title,
        line=line,
        authors=[_name(c) for c in data.get("creators", []) if _name(c)],
        abstract=_abstract(data.get("abstractNote") or ""),
        url=data.get("url") or None,
        external_ids={**item_ids(data), ZOTERO_SCHEME: f"{group_id}/{item.get('key') or data.get('key')}"},
        venue=clean_space(venue) if venue else None,
        year=int(year.group(1)) if year else None,
        tags=tags,
    )


def _name(creator_data: dict[str, Any]) -> str:
    if creator_data.get("name"):
        return clean_space(creator_data["name"])
    return clean_space(f"{creator_data.get('firstName', '')} {creator_data.get('lastName', '')}")


def _abstract(text: str) -> str:
    """An abstract as stored: at most ABSTRACT_MOST characters, cut at a word with an
    ellipsis (a real one is a few thousand; a group whose notes hold whole papers would
    otherwise have the search index hold them too)."""
    text = clean_space(text)
    if len(text) <= ABSTRACT_MOST:
        return text
    return text[:ABSTRACT_MOST].rsplit(" ", 1)[0] + " …"
