"""Entity resolution across and within sources (issue #16): records that denote the same real-world thing are
linked into clusters, each with a canonical entity in the graph (``SAME_AS`` edges from its members), current
values, and the conflicts between them kept with their provenance."""
