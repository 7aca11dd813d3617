"""Prometheus (Debian package) with ESC's config and alert rules from ops/prometheus, on its own port.

Scrape targets: the ESC worker's /metrics (``ESC_HOST:ESC_WEB_PORT``, job ``esc``) and every JSON file in
``<state>/stack/prometheus/targets/`` (file_sd, job ``esc-extra``), which :func:`register_target` writes so extra
workers and tests can be scraped without a restart.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from string import Template

from esc.settings import Settings
from esc.stack.install import debian_package
from esc.stack.process import http_ok
from esc.stack.services import OPS_DIR, Service, service_dir

_TARGET_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def targets_dir(settings: Settings) -> Path:
    return service_dir(settings, "prometheus") / "targets"


def render_config(*, esc_target: str, self_target: str, targets: Path, rules: Path) -> str:
    template = Template((OPS_DIR / "prometheus" / "prometheus.yml").read_text())
    return template.substitute(
        esc_target=esc_target, self_target=self_target, targets_dir=targets, rules_dir=rules
    )


def register_target(
    settings: Settings, name: str, address: str, labels: Mapping[str, str] | None = None
) -> Path:
    """Ask the stack's Prometheus to scrape ``http://<address>/metrics`` (job ``esc-extra``); returns the file.

    ``name`` names the file (letters, digits, ``._-``); writing is atomic, so Prometheus never reads half a file.
    """
    if not _TARGET_NAME.match(name):
        raise ValueError(f"target name {name!r}: use 1-100 letters, digits, '.', '_' or '-'")
    directory = targets_dir(settings)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    tmp = directory / f".{name}.json.tmp"
    tmp.write_text(json.dumps([{"targets": [address], "labels": dict(labels or {})}], indent=2) + "\n")
    tmp.replace(path)
    return path


def unregister_target(settings: Settings, name: str) -> bool:
    if not _TARGET_NAME.match(name):
        raise ValueError(f"target name {name!r}: use 1-100 letters, digits, '.', '_' or '-'")
    path = targets_dir(settings) / f"{name}.json"
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


class Prometheus(Service):
    name = "prometheus"
    start_timeout = 60.0
    stop_timeout = 20.0

    @property
    def address(self) -> str:
        return self.settings.prometheus_url

    def ports(self) -> Sequence[int]:
        return (self.settings.prometheus_port,)

    @property
    def config_file(self) -> Path:
        return self.dir / "prometheus.yml"

    def install(self) -> None:
        debian_package(
            name=self.name, package="prometheus", binary="prometheus", cache_dir=self.cache_dir, say=self.say,
            service="prometheus",  # the package enables its own server on :9090 (every interface): disabled
        )

    def prepare(self) -> None:
        s = self.settings
        targets_dir(s).mkdir(parents=True, exist_ok=True)
        (self.dir / "data").mkdir(parents=True, exist_ok=True)
        self.config_file.write_text(
            render_config(
                esc_target=f"{s.host}:{s.web_port}",
                self_target=f"{s.host}:{s.prometheus_port}",
                targets=targets_dir(s),
                rules=OPS_DIR / "prometheus" / "rules",
            )
        )

    def command(self) -> tuple[list[str], Mapping[str, str]]:
        binary = debian_package(
            name=self.name,
            package="prometheus",
            binary="prometheus",
            cache_dir=self.cache_dir,
            say=lambda _: None,
        )
        argv = [
            str(binary),
            f"--config.file={self.config_file}",
            f"--storage.tsdb.path={self.dir / 'data'}",
            "--storage.tsdb.retention.time=7d",
            f"--web.listen-address={self.settings.host}:{self.settings.prometheus_port}",
            "--web.enable-lifecycle",
        ]
        return argv, dict(os.environ)

    def ready(self) -> bool:
        return http_ok(f"{self.address}/-/ready")
