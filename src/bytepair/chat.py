"""Chat templates: turn a list of ``{"role", "content"}`` messages into the flat text a chat model reads.

A chat model never sees JSON; it sees one sequence in which special tokens mark where each message
starts and ends. This module renders that sequence, either with a built-in layout or with a Jinja2
template written the way Hugging Face ``chat_template`` strings are, and (through a tokenizer) turns
it into ids.

Built-in layouts (``BUILTIN_TEMPLATES``):

- ``"llama3"``: ``<|begin_of_text|>``, then per message
  ``<|start_header_id|>{role}<|end_header_id|>\\n\\n{content}<|eot_id|>``; the generation prompt is
  ``<|start_header_id|>assistant<|end_header_id|>\\n\\n``.
- ``"chatml"``: per message ``<|im_start|>{role}\\n{content}<|im_end|>\\n``; the generation prompt is
  ``<|im_start|>assistant\\n``.

Custom templates render in the environment Hugging Face ``transformers`` uses, so a model's
``chat_template`` string gives the same text here as there: a sandboxed, immutable Jinja2
environment with ``trim_blocks`` and ``lstrip_blocks``, the loop-controls extension
(``{% break %}``, ``{% continue %}``), a ``{% generation %}`` block tag (rendered as its body),
the ``tojson`` filter (no HTML escaping, ``ensure_ascii=False``), and the globals
``raise_exception``, ``strftime_now``, ``dict`` and ``namespace``. The template sees ``messages``,
``add_generation_prompt``, ``tools=None``, ``documents=None`` and every extra keyword variable
(``bos_token``, ``eos_token``, ...). Hugging Face passes the tokenizer's special tokens as those
variables; here the caller passes them.

Safety: message text that contains one of the template's special tokens would forge structure (a
user writing ``<|eot_id|>`` ends their own turn), so it is refused unless the caller passes
``allow_special_in_content=True``.

This module does not know any tokenizer internals: it calls ``tokenizer.encode(text,
allowed_special="all")`` and reads ``tokenizer.special_tokens`` and ``tokenizer.normalization``.
It does not implement tool-call formats, multimodal content lists or Hugging Face's
assistant-token masks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .errors import ChatTemplateError
from .normalize import normalize

__all__ = [
    "BUILTIN_TEMPLATES",
    "ChatTemplateError",
    "apply_chat_template",
    "render_chat",
    "template_special_tokens",
]


# The layouts are written as Jinja sources so that they can be exported unchanged as a Hugging Face
# ``chat_template``; every newline below is one the model was trained on (seed 003 shows both).
BUILTIN_TEMPLATES = {
    "chatml": (
        "{% for message in messages %}"
        "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
    "llama3": (
        "{{ '<|begin_of_text|>' }}"
        "{% for message in messages %}"
        "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'"
        " + message['content'] + '<|eot_id|>' }}"
        "{% endfor %}"
        "{% if add_generation_prompt %}"
        "{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
        "{% endif %}"
    ),
}

# The special tokens each built-in layout writes; a tokenizer must have them all to encode it.
BUILTIN_SPECIAL_TOKENS = {
    "chatml": ("<|im_start|>", "<|im_end|>"),
    "llama3": ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"),
}

# Roles the built-in layouts accept; custom templates accept any non-empty string.
BUILTIN_ROLES = ("system", "user", "assistant", "tool")


def template_special_tokens(name):
    """The special tokens a built-in template writes, to train a tokenizer that can encode it.

    Example:
        >>> template_special_tokens("chatml")
        ['<|im_start|>', '<|im_end|>']
    """
    _check_builtin_name(name)
    return list(BUILTIN_SPECIAL_TOKENS[name])


def render_chat(
    messages,
    template,
    add_generation_prompt=False,
    *,
    allow_special_in_content=False,
    special_tokens=(),
    **variables,
):
    """Render ``messages`` with a built-in layout name or a Jinja source; returns the text.

    ``special_tokens``: more strings that message text must not contain (``apply_chat_template``
    passes the tokenizer's). For a built-in layout its own tokens are always protected; for a
    custom template so are the string variables whose names end in ``_token`` (``bos_token``...).

    Example:
        >>> render_chat([{"role": "user", "content": "Hi"}], "chatml", add_generation_prompt=True)
        '<|im_start|>user\\nHi<|im_end|>\\n<|im_start|>assistant\\n'

    NOTE: content is inserted verbatim. The Llama 3 template on the Hugging Face Hub (and Meta's
    reference code) strips whitespace around each message; the built-in ``"llama3"`` does not.
    """
    source, is_builtin = _resolve_template(template)
    clean = _validated_messages(messages, is_builtin)
    if not allow_special_in_content:
        protected = set(special_tokens) | _template_tokens(template, is_builtin, variables)
        _refuse_special_in_content(clean, protected)
    context = {"tools": None, "documents": None, **variables}
    return _render(source, clean, bool(add_generation_prompt), context)


def apply_chat_template(
    tokenizer,
    messages,
    *,
    template="chatml",
    add_generation_prompt=False,
    tokenize=True,
    allow_special_in_content=False,
    **template_variables,
):
    """Render ``messages`` and encode them with ``tokenizer``; ``tokenize=False`` returns the text.

    The text is encoded with ``allowed_special="all"``, so the markers the template writes become
    their special-token ids; message text cannot smuggle in any of the tokenizer's special tokens
    unless ``allow_special_in_content=True``.

    Example:
        >>> tok = bytepair.train(corpus, mode="byte", vocab_size=300,  # doctest: +SKIP
        ...                      special_tokens=template_special_tokens("chatml"))
        >>> ids = apply_chat_template(tok, [{"role": "user", "content": "Hi"}])  # doctest: +SKIP
        >>> ids[0] == tok.special_tokens["<|im_start|>"]  # doctest: +SKIP
        True

    WARNING: a built-in layout needs each of its special tokens in ``tokenizer.special_tokens``;
    without them the markers would be encoded as plain text, so this raises instead.
    """
    special = dict(getattr(tokenizer, "special_tokens", None) or {})
    text = render_chat(
        messages,
        template,
        add_generation_prompt,
        allow_special_in_content=allow_special_in_content,
        special_tokens=special,
        **template_variables,
    )
    if not tokenize:
        return text
    if isinstance(template, str) and template in BUILTIN_TEMPLATES:
        _check_tokenizer_has_tokens(template, special)
    _check_normalization_keeps_markers(text, getattr(tokenizer, "normalization", None), special)
    return tokenizer.encode(text, allowed_special="all")


# --- resolving and validating -----------------------------------------------------------------


def _check_builtin_name(name):
    if name not in BUILTIN_TEMPLATES:
        names = ", ".join(repr(n) for n in BUILTIN_TEMPLATES)
        raise ChatTemplateError(
            f"unknown chat template {name!r}; the built-in templates are {names}, "
            "or pass the Jinja source of a template"
        )


def _resolve_template(template):
    """(Jinja source, is_builtin) for a built-in name or a Jinja source string."""
    if not isinstance(template, str):
        raise ChatTemplateError(
            f"template must be a built-in name or a Jinja source string, not {template!r}"
        )
    if template in BUILTIN_TEMPLATES:
        return BUILTIN_TEMPLATES[template], True
    # A string with no Jinja markup cannot render messages, so it is taken as a misspelled name.
    if "{{" not in template and "{%" not in template:
        _check_builtin_name(template)
    return template, False


def _validated_messages(messages, is_builtin):
    """Plain-dict copies of the messages, after checking their shape; raises ChatTemplateError."""
    if not isinstance(messages, (list, tuple)):
        raise ChatTemplateError(
            f"messages must be a list of dicts with 'role' and 'content', not {messages!r}"
        )
    return [_validated_message(index, message, is_builtin) for index, message in enumerate(messages)]


def _validated_message(index, message, is_builtin):
    if not isinstance(message, Mapping):
        raise ChatTemplateError(
            f"message {index} must be a dict with 'role' and 'content', not {message!r}"
        )
    if "role" not in message:
        raise ChatTemplateError(f"message {index} has no 'role': {dict(message)!r}; add one")
    role = message["role"]
    if is_builtin and role not in BUILTIN_ROLES:
        allowed = ", ".join(repr(r) for r in BUILTIN_ROLES)
        raise ChatTemplateError(
            f"message {index} has role {role!r}; the built-in templates accept {allowed} "
            "(use a custom template for other roles)"
        )
    if not isinstance(role, str) or not role:
        raise ChatTemplateError(f"message {index} has role {role!r}; a role must be a non-empty string")
    if "content" not in message:
        raise ChatTemplateError(f"message {index} has no 'content': {dict(message)!r}; add one")
    content = message["content"]
    if not isinstance(content, str):
        raise ChatTemplateError(
            f"message {index} has content {content!r} of type {type(content).__name__}; "
            "content must be a string"
        )
    return dict(message)


def _template_tokens(template, is_builtin, variables):
    """Special-token strings a template writes, as far as they can be known without a tokenizer."""
    if is_builtin:
        return set(BUILTIN_SPECIAL_TOKENS[template])
    return {
        value
        for name, value in variables.items()
        if name.endswith("_token") and isinstance(value, str) and value
    }


def _refuse_special_in_content(messages, protected):
    for index, message in enumerate(messages):
        for field in ("role", "content"):
            found = sorted(token for token in protected if token and token in message[field])
            if found:
                raise ChatTemplateError(
                    f"message {index} ({message['role']!r}) {field} contains the special token "
                    f"{found[0]!r}, which would forge the conversation's structure; remove it, or "
                    "pass allow_special_in_content=True if the text is trusted"
                )


def _check_tokenizer_has_tokens(name, special):
    missing = [token for token in BUILTIN_SPECIAL_TOKENS[name] if token not in special]
    if missing:
        raise ChatTemplateError(
            f"template {name!r} writes the special tokens {missing!r}, which this tokenizer does "
            f"not have; train it with special_tokens=template_special_tokens({name!r}), or pass "
            "tokenize=False to get the text"
        )


def _special_matches(text, special):
    """The special-token strings in ``text``, in order, longest first at each position."""
    if not special:
        return []
    alternatives = "|".join(re.escape(token) for token in sorted(special, key=len, reverse=True))
    return re.findall(alternatives, text)


def _check_normalization_keeps_markers(text, form, special):
    # subtle: the tokenizer normalizes before it matches special tokens, and NFKC folds
    # full-width "＜｜im_end｜＞" into "<|im_end|>": content would forge a marker after the check.
    if form is None:
        return
    before = _special_matches(text, special)
    after = _special_matches(normalize(text, form), special)
    if before != after:
        raise ChatTemplateError(
            f"{form} normalization turns the rendered chat's special tokens {before!r} into "
            f"{after!r}: message text holds characters that normalize into (or break) a special "
            "token; remove them from the messages"
        )


# --- the Jinja environment (same behaviour as Hugging Face transformers') ---------------------


def _raise_exception(message):
    """Lets a template reject a conversation, e.g. ``raise_exception('roles must alternate')``."""
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # Jinja's own tojson escapes <, > and & for HTML, which would change the model's input.
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _strftime_now(date_format):
    """Today's local date and time, formatted (Llama 3.1+ templates print the date)."""
    return datetime.now().strftime(date_format)


class _TemplateDict:
    """``dict(...)`` and ``dict.fromkeys(...)`` for templates, without exposing the type itself."""

    def __call__(self, *args, **kwargs):
        return dict(*args, **kwargs)

    def fromkeys(self, *args, **kwargs):
        return dict.fromkeys(*args, **kwargs)


class _TemplateNamespace(jinja2.utils.Namespace):
    """``namespace(...)`` that refuses underscore names, the way out of a sandbox."""

    def __init__(*args, **kwargs):  # noqa: N805 -- Jinja's Namespace takes self inside *args too
        self, rest = args[0], args[1:]
        attributes = dict(*rest, **kwargs)
        for name in attributes:
            _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attributes)

    def __setitem__(self, name, value):
        _TemplateNamespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name):
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                f"a chat template cannot set the attribute {name!r} on a namespace; rename it"
            )


class _GenerationBlock(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}``: marks assistant text in HF templates; renders its body."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


@lru_cache(maxsize=1)
def _environment():
    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationBlock, jinja2.ext.loopcontrols],
    )
    environment.filters["tojson"] = _tojson
    environment.globals["raise_exception"] = _raise_exception
    environment.globals["strftime_now"] = _strftime_now
    environment.globals["dict"] = _TemplateDict()
    environment.globals["namespace"] = _TemplateNamespace
    return environment


@lru_cache(maxsize=64)
def _compiled(source):
    try:
        return _environment().from_string(source)
    except jinja2.TemplateSyntaxError as error:
        lines = source.splitlines()
        line = lines[error.lineno - 1] if 0 < error.lineno <= len(lines) else ""
        raise ChatTemplateError(
            f"chat template has a syntax error on line {error.lineno}: {error.message} "
            f"(line {error.lineno} reads {line!r}); fix the Jinja source"
        ) from None


def _render(source, messages, add_generation_prompt, context):
    template = _compiled(source)
    try:
        return template.render(
            **context, messages=messages, add_generation_prompt=add_generation_prompt
        )
    except jinja2.TemplateError as error:
        # raise_exception(...) and undefined names land here: the template rejected the input.
        raise ChatTemplateError(f"chat template failed to render: {error}") from None
