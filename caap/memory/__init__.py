"""What the agent keeps between episodes: demonstrations retrieved by task similarity, experience
per task family (HxAgent), successful runs saved as demonstrations (WebWISE auto-context), an action
cache that skips the LLM on a screen it has solved before (Steward), and trajectory metrics."""
