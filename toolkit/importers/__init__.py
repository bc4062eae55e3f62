"""Importers of published datasets from the user's own copy (BBQ and MBBQ, CrowS-Pairs, the
regional study's SOS sets): they read the user's files whole, refuse bad input with located
problems, and write what toolkit.catalog.published reads."""
