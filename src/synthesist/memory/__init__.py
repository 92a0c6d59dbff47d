"""Research memory: per-run evidence with deduplication and hybrid retrieval, and the local-library index.

Importing this package is cheap: the embedding model (torch) is imported the first time a text is embedded.
"""

from .bibliography import format_bibliography
from .bm25 import BM25Index
from .embeddings import Embedder, EmbeddingModelError, VectorCache, content_hash
from .library_index import IndexStats, LibraryHit, LibraryIndex, library_name
from .owner import repair_command
from .pool import AddResult, MergeRecord
from .research_memory import ResearchMemory
from .run_collection import drop_run_collection, run_collections
from .scope import NoActiveRunError, current_memory, use_memory
from .snapshot import SnapshotError
from .store import MemoryStoreError, open_chroma
from .vector_cache import ChromaVectorCache

__all__ = [
    "AddResult",
    "BM25Index",
    "ChromaVectorCache",
    "Embedder",
    "EmbeddingModelError",
    "IndexStats",
    "LibraryHit",
    "LibraryIndex",
    "MemoryStoreError",
    "MergeRecord",
    "NoActiveRunError",
    "ResearchMemory",
    "SnapshotError",
    "VectorCache",
    "content_hash",
    "current_memory",
    "format_bibliography",
    "library_name",
    "open_chroma",
    "repair_command",
    "drop_run_collection",
    "run_collections",
    "use_memory",
]
