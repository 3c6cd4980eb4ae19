"""Search-quality evaluation over the shared corpus (``just eval``, ``just eval-modes``).

It indexes an agent home with the loader, so it sits on a floor above `ingest/`, `search/` and
`read/` (docs/design.md §3), beside the front ends, not inside `search/`:

- `evaluation.search`: keyword hit@1, hit@5 and MRR over ``fixtures/eval/queries.toml``, and the
  thread-recall questions of ``fixtures/eval/recall.toml``;
- `evaluation.modes`: the same queries per search mode (keyword, vector, hybrid) with a local model.
"""
