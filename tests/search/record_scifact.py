"""Record all-MiniLM-L6-v2's vectors of SciFact for the retrieval-quality test:

    python -m tests.search.record_scifact

Embedding SciFact's 5,183 abstracts takes minutes on 2 cores, too long for every test run;
the test embeds a sample again with the model from ../shared/models and checks it against
this recording (so the recording is this model's), then measures with all of it. Stored as
int8 codes and scales (bot.search.vectors.quantised), as the bot stores vectors.
"""

from __future__ import annotations

import numpy as np

from bot.search.embedding import FastEmbedder
from bot.search.evaluation import embed_beir, read_beir
from bot.search.vectors import quantised
from tests.conftest import DATA, MINILM, REPO

SCIFACT = REPO.parent / "shared" / "eval" / "scifact"
RECORDED = DATA / "scifact-minilm.npz"


def record() -> None:
    data = read_beir(SCIFACT)
    vectors = embed_beir(data, FastEmbedder(model_dir=MINILM))
    queries = sorted(vectors.queries)
    docs = [quantised(row) for row in vectors.documents]
    asked = [quantised(vectors.queries[text]) for text in queries]
    np.savez_compressed(
        RECORDED,
        documents=np.frombuffer(b"".join(c for c, _ in docs), dtype=np.int8).reshape(len(docs), -1),
        document_scales=np.array([s for _, s in docs], dtype=np.float32),
        queries=np.frombuffer(b"".join(c for c, _ in asked), dtype=np.int8).reshape(len(asked), -1),
        query_scales=np.array([s for _, s in asked], dtype=np.float32),
        query_texts=np.array(queries),
    )
    print(f"wrote {RECORDED} ({RECORDED.stat().st_size:,} bytes)")


if __name__ == "__main__":
    record()
