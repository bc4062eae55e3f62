"""Both packages as a user goes through them: the extending recipes, replication."""
