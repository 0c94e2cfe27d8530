"""The corpus formats by name, in detection order (cheap and specific signatures first,
the prose fallback last), each with the module in bot.corpus that reads it. Only names
here: the command line lists them as choices without importing the readers."""

READER_MODULES = {
    "jsonl": "jsonl",
    "bibtex": "bibtex",
    "arxiv": "arxiv_atom",
    "openreview": "openreview",
    "poster-session": "poster_session",
    "trending": "trending",
    "blog-review": "blog_review",
    "topic-abstracts": "topic_abstracts",
}
FORMAT_NAMES = tuple(READER_MODULES)

# The feed an operator most likely wants (arXiv's newest cs.LG papers, read as "arxiv"),
# as `paperclub feed add --help` and a refused feed URL show it.
EXAMPLE_FEED_URL = (
    "https://export.arxiv.org/api/query?search_query=cat:cs.LG"
    "&sortBy=submittedDate&sortOrder=descending&max_results=100"
)
