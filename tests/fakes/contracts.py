"""Hand-made observed contracts (as ``esc.contract.inference`` would produce them) for unit tests."""

from __future__ import annotations

from esc.contract.model import Contract, Endpoint, FieldSpec, ForeignKey, HierarchyEdge, SourceSpec
from esc.contract.records import field_id
from esc.contract.typing import PhysicalType, SourceFormat


def field(
    source: str, name: str, type_: PhysicalType = "int", path: str | None = None, **stats: object
) -> FieldSpec:
    p = path or name
    base: dict[str, object] = {"count": 10, "null_rate": 0.0, "distinct": 10, "uniqueness": 1.0}
    base.update(stats)
    return FieldSpec(id=field_id(source, p), name=name, path=p, type=type_, **base)  # type: ignore[arg-type]


def source(
    name: str,
    fmt: SourceFormat,
    fields: list[FieldSpec],
    key: list[str] | None = None,
    records: int = 10,
    parent: str | None = None,
) -> SourceSpec:
    return SourceSpec(
        format=fmt,
        files=[f"{name.split('.')[0]}.{fmt}"],
        records=records,
        parent=parent,
        identity_key=key or [],
        key_confidence=1.0 if key else None,
        key_evidence={"unique": True, "records": records} if key else {},
        fields=fields,
    )


def fk(src: str, fields: list[str], dst: str, to_fields: list[str], confidence: float = 1.0) -> ForeignKey:
    return ForeignKey.model_validate(
        {
            "from": Endpoint(source=src, fields=fields),
            "to": Endpoint(source=dst, fields=to_fields),
            "confidence": confidence,
            "evidence": {"inclusion": confidence},
        }
    )


def chinook_like() -> Contract:
    """A small slice of Chinook: Artist, Album, Employee (self FK), Customer, Invoice with nested lines."""
    line = "Invoice.InvoiceLine"
    sources = {
        "Artist": source(
            "Artist", "csv", [field("Artist", "ArtistId"), field("Artist", "Name", "string")], ["ArtistId"]
        ),
        "Album": source(
            "Album",
            "jsonl",
            [
                field("Album", "AlbumId"),
                field("Album", "Title", "string"),
                field("Album", "ArtistId", uniqueness=0.5),
            ],
            ["AlbumId"],
        ),
        "Employee": source(
            "Employee",
            "json",
            [
                field("Employee", "EmployeeId"),
                field("Employee", "LastName", "string"),
                field("Employee", "ReportsTo", null_rate=0.1, uniqueness=0.3),
            ],
            ["EmployeeId"],
        ),
        "Customer": source(
            "Customer",
            "csv",
            [
                field("Customer", "CustomerId"),
                field("Customer", "Email", "string", semantic="email"),
                field("Customer", "SupportRepId", uniqueness=0.3),
                field("Customer", "Notes", "text", max_length=900),
            ],
            ["CustomerId"],
        ),
        "Invoice": source(
            "Invoice",
            "json",
            [
                field("Invoice", "InvoiceId"),
                field("Invoice", "CustomerId", uniqueness=0.2),
                field("Invoice", "Total", "float"),
            ],
            ["InvoiceId"],
        ),
        line: source(
            line,
            "json",
            [
                field(line, "InvoiceLineId", path="InvoiceLine[*].InvoiceLineId"),
                field(line, "InvoiceId", path="InvoiceLine[*].InvoiceId", uniqueness=0.4),
                field(line, "Quantity", path="InvoiceLine[*].Quantity", uniqueness=0.1),
            ],
            ["InvoiceLineId"],
            records=30,
            parent="Invoice",
        ),
    }
    return Contract(
        sources=sources,
        foreign_keys=[
            fk("Album", ["ArtistId"], "Artist", ["ArtistId"]),
            fk("Employee", ["ReportsTo"], "Employee", ["EmployeeId"], 0.98),
            fk("Customer", ["SupportRepId"], "Employee", ["EmployeeId"], 0.97),
            fk("Invoice", ["CustomerId"], "Customer", ["CustomerId"]),
            fk(line, ["InvoiceId"], "Invoice", ["InvoiceId"]),
        ],
        hierarchy=[
            HierarchyEdge(
                parent="Invoice",
                child=line,
                path="$[*].InvoiceLine",
                parent_fields=["InvoiceId"],
                child_fields=["InvoiceId"],
            )
        ],
    )
