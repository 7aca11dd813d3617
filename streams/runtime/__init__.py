"""Runtimes feed the agents' functions. Clients (Kafka, Neo4j, Weaviate) are built here and nowhere else."""
