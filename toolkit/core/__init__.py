"""The foundation every other package builds on: typed errors and located problems, atomic file
I/O, strict records, where the project and the user's cache are, interrupt handling, and the
checks every human-written text passes. Imports nothing else of polyprobe."""
