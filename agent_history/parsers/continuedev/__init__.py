"""Continue (continue.dev) session documents: see `parser`."""
