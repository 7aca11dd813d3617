"""The exception types ESC raises on purpose, in one place (every layer may import the core).

Callers catch these, or :class:`EscError` for all of them. Each keeps the builtin base it always had
(``ValueError``, ``RuntimeError``), so code that caught those still does. The stack tooling's ``StackError``
(``esc.stack.services``) and the interpreter's internal ``Decline`` signal are the only others, and the first
derives from ``EscError`` too.
"""

from __future__ import annotations


class EscError(Exception):
    """Base of every error ESC raises on purpose."""


class InputError(EscError, ValueError):
    """Data or a request that cannot be used as it is (the message says why)."""


class ContractFormatError(InputError):
    """A contract file or message that is not a valid contract."""


class ProposalFormatError(InputError):
    """An LLM's schema proposal that is not in the expected form."""


class CoercionError(InputError):
    """A value that does not fit its field's type (keys must; attributes are kept as text instead)."""


class UnsafeQuery(EscError, ValueError):
    """A query that could write, or names what the contract does not hold: refused before it runs."""


class UnsafeIdentifier(UnsafeQuery):
    """An identifier that cannot be escaped safely (empty, NUL, too long)."""


class InvalidPlan(EscError, ValueError):
    """A query plan that does not match the contract, or that a store's compiler cannot express."""


class ConfigError(EscError, ValueError):
    """Settings that cannot work together (the message names the variables)."""


class InsecureBind(ConfigError):
    """The HTTP API asked to listen beyond loopback without ESC_API_TOKEN."""


class StoreLocked(EscError, RuntimeError):
    """The embedded store's files are held by another process."""


class EmbeddingError(EscError, RuntimeError):
    """The embedder failed on a batch (the message has the cause)."""


class EmbedderUnavailable(EmbeddingError):
    """The configured embedder cannot be loaded or reached."""
