"""The evidence view of a trial, below every job that reads one (the judge, the turn verifier,
the served reward, skills and evolve): numbered steps with their actions, outputs and claims
(:mod:`.view`), the agent's own strings indexed once per trial (:mod:`.authored`), each output
line's origin (:mod:`.provenance`) and a quote's kind from those origins (:mod:`.quotes`).
Pure: values in, values out."""
