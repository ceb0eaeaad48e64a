"""hichunk inside other frameworks: ``hichunk.integrations.langchain`` (extra ``langchain``) and
``hichunk.integrations.llama_index`` (extra ``llama-index``).

Both speak the same metadata (``hichunk.integrations.common``): every chunk or
passage carries ``source``, ``start_index``/``end_index`` (its exact raw span:
``text[start_index:end_index]`` is the chunk's text), ``level``, ``kind``,
``titles``, ``node_id``, ``node_path``, ``parent_id`` and, for paged
documents, ``page_start``/``page_end``. Importing this package loads neither
framework.
"""
