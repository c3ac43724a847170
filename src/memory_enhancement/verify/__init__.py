"""Verification: are a memory's citations still true of the code?

`repo` reads cited files inside the repository root; `git` asks git what moved
(line maps, renames) a bounded number of times per run; `verifier` judges each
citation (valid, moved, stale, missing, ...); `runs` verifies a batch, records
it in `history` and applies `fixes`; `confidence` turns history into a score;
`urls` checks URL citations on request.
"""
