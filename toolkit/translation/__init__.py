"""Translation management: machine translation (DeepL, placeholders, slot rules, glossaries, the
ledger of billed characters), contributors' drafts, XLIFF round trips, stale marking, coverage and
post-editing quality. Every text it writes into the store passes toolkit.render.gate."""
