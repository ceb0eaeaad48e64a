"""hichunk inside other frameworks: ``hichunk.integrations.langchain`` (extra ``langchain``),
``hichunk.integrations.llama_index`` (extra ``llama-index``) and ``hichunk.integrations.haystack`` (extra
``haystack``).

All three speak the same metadata (``hichunk.integrations.common``): every chunk or
passage carries ``source``, ``start_index``/``end_index`` (its exact raw span:
``text[start_index:end_index]`` is the chunk's text), ``level``, ``kind``,
``titles``, ``node_id``, ``node_path``, ``parent_id`` and, for paged
documents, ``page_start``/``page_end``. Besides splitters and retrievers over a
hichunk ``Index``, each framework gets hichunk's budget fill with Auto-Merge over
its own vector stores (``HiChunkVectorStoreRetriever``, ``HiChunkAutoMergeRetriever`` for
LlamaIndex and for Haystack;
the shared fill is ``hichunk.retrieval.search.external``) and hichunk's embedders.
``store_bench`` and ``overhead`` measure them. Importing this package loads no
framework.
"""
