"""Published datasets as imported from the user's own copy (.polyprobe/imports/, never committed):
the import file format and the records of BBQ, CrowS-Pairs and the regional study's SOS sets,
read by the catalog and the suite kinds. The importers (toolkit.importers) write them."""
