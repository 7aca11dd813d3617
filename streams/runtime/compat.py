"""Small, documented compatibility shims between faust-streaming 0.15 and aiokafka 0.14."""

from __future__ import annotations


def patch_faust_for_aiokafka_014() -> None:
    """faust's ``Producer.supports_headers`` reads ``client.api_version``, which aiokafka 0.14 removed.

    Every broker ESC supports (Kafka >= 0.11; we run 3.9) supports headers, so answer True.
    """
    from faust.transport.drivers import aiokafka as faust_aiokafka

    def supports_headers(self: object) -> bool:
        return True

    faust_aiokafka.Producer.supports_headers = supports_headers  # type: ignore[method-assign]
