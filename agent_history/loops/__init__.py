"""Loops (issue 12): launch detection, closeout qualification, lane returns, status, usage report.

Pure: values in, values out (the post-pass in `ingest.loops` reads and writes the catalogue).
The patterns live in `rules`, each with the sentence of issue 12 it implements.
"""
