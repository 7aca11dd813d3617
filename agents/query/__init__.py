"""Query agent: schema-grounded planning over the graph and the vector index, answers with citations."""
