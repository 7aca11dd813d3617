"""Names both runtimes derive from the settings (kept apart from the runtimes so a one-off command, such as
``esc ask``, can use them without importing a runtime)."""

from __future__ import annotations

import re


def collection_for(app_id: str) -> str:
    """The vector collection name, as the Kafka runtime names it (agents.stores.weaviate.collection_name, which
    cannot be imported without the Weaviate client)."""
    cleaned = re.sub(r"[^0-9A-Za-z_]", "_", app_id) or "Esc"
    return "EscText_" + cleaned if not cleaned[0].isalpha() else cleaned[0].upper() + cleaned[1:] + "Text"
