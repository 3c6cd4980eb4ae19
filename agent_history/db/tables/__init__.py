"""The catalogue's writers' statements, one module per table family (docs/design.md §3, "One
query layer"). The loader, the collector, curation, archive, the embedder and journal-sync build
their rows in their own packages and hand them to the functions here, which own the SQL over
`ah` for their tables: what a pass writes, purges, locks and recounts, and the reads those layers
need themselves (they sit below `read`, so they cannot ask it). The statements behind the read
commands live in the query modules of `read/` and `search/`. Nothing here imports a layer above
`db`."""
