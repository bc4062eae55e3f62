"""Rendering: suite kinds (the code behind each folder of templates/), render jobs, the renderer,
the row schema, the gate every text passes before it enters the store, and the catalog checks
built on rendering (validate, lint). Imports toolkit.catalog, toolkit.store and toolkit.core."""
