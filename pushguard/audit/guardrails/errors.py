"""The one error of ``--guardrails DIR``: a file Google would refuse or the audit cannot read."""

from __future__ import annotations


class GuardrailsError(ValueError):
    """``--guardrails``: ``file`` (and ``field``, a dotted path, when one is at fault) cannot be
    used, because ``message``. A usage error: exit 2 before Spark starts."""

    def __init__(self, file: str, field: str | None, message: str) -> None:
        self.file, self.field, self.message = file, field, message
        where = f"{file}: {field}" if field else file
        super().__init__(f"--guardrails: {where}: {message}")


def check_fields(
    data: dict[str, object], allowed: tuple[str, ...], file: str, prefix: str = ""
) -> None:
    """Every key of ``data`` is one of ``allowed``.

    Raises:
        GuardrailsError: naming the first unknown field (``prefix`` + key) and the allowed
            ones.
    """
    for key in data:
        if key not in allowed:
            raise GuardrailsError(
                file,
                f"{prefix}{key}",
                f"unknown field (allowed here: {', '.join(allowed)})",
            )
