"""Spark DDL -> Arrow schema, for the batches the rules yield in ``mapInArrow``.

The findings' schema is defined once, as the Spark DDL
:data:`~pushguard.audit.schemas.FINDINGS_DDL`; :func:`arrow_schema` derives its Arrow form with an
exact mapping of the few Spark types the audit writes. Pure Python (no JVM, no Spark session): it
runs on the executors too. ``tests/audit/test_contracts.py`` checks that Spark reads the derived
schema back as the DDL.
"""

from __future__ import annotations

import pyarrow as pa

from pushguard.audit.schemas import ddl_columns

ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "array<string>": pa.list_(pa.string()),
    "map<string,string>": pa.map_(pa.string(), pa.string()),
}
"""Spark DDL type (lower case, no spaces) -> the Arrow type Spark reads back as that type."""


def arrow_schema(ddl: str) -> pa.Schema:
    """The Arrow schema of a Spark DDL string (every field nullable, as in the DDL).

    Raises:
        ValueError: a type outside :data:`ARROW_TYPES` (named), or a malformed DDL.
    """
    fields = []
    for name, spark_type in ddl_columns(ddl):
        key = "".join(spark_type.lower().split())
        if key not in ARROW_TYPES:
            raise ValueError(
                f"column {name!r}: no Arrow type for the Spark type {spark_type!r} "
                f"(known: {', '.join(ARROW_TYPES)})"
            )
        fields.append(pa.field(name, ARROW_TYPES[key]))
    return pa.schema(fields)
