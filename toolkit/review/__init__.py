"""Human review in Label Studio: the client and a local server, the review task shown to
annotators, push, pull and review status, the review policy that turns verdicts into a status, and
agreement between reviewers."""
