"""The catalog: locales, identity groups and their taxonomy, suites and their English templates,
grammar macros and the sandbox they run in, pinned and versioned lexicons, studies, published
datasets as imported, and the loader that reads them all (with the translation store) and
collects every problem. Imports toolkit.core and toolkit.store."""
