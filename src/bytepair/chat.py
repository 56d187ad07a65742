"""Chat templates: turn a list of ``{"role", "content"}`` messages into the flat text a chat model reads.

A chat model never sees JSON; it sees one sequence in which special tokens mark where each message
starts and ends. This module renders that sequence, either with a built-in layout or with a Jinja2
template written the way Hugging Face ``chat_template`` strings are, and (through a tokenizer) turns
it into ids.

Built-in layouts (``BUILTIN_TEMPLATES``):

- ``"llama3"``: ``<|begin_of_text|>``, then per message
  ``<|start_header_id|>{role}<|end_header_id|>\\n\\n{content}<|eot_id|>`` with the content stripped
  of surrounding whitespace, as Meta's template does; the generation prompt is
  ``<|start_header_id|>assistant<|end_header_id|>\\n\\n``.
- ``"chatml"``: per message ``<|im_start|>{role}\\n{content}<|im_end|>\\n``; the generation prompt is
  ``<|im_start|>assistant\\n``.

Both mark each assistant message's content and its end-of-turn token with ``{% generation %}``, so
``apply_chat_template(..., return_dict=True, return_assistant_tokens_mask=True)`` and
``encode_conversations`` know which tokens a fine-tuned model should learn to produce.

Custom templates render in the environment Hugging Face ``transformers`` uses, so a model's
``chat_template`` string gives the same text here as there: a sandboxed, immutable Jinja2
environment with ``trim_blocks`` and ``lstrip_blocks``, the loop-controls extension
(``{% break %}``, ``{% continue %}``), a ``{% generation %}`` block tag (rendered as its body; its
tokens are the assistant tokens of the mask),
the ``tojson`` filter (no HTML escaping, ``ensure_ascii=False``), and the globals
``raise_exception``, ``strftime_now``, ``dict`` and ``namespace``. The template sees ``messages``,
``add_generation_prompt``, ``tools=None``, ``documents=None`` and every extra keyword variable
(``bos_token``, ``eos_token``, ...). As in Hugging Face, ``apply_chat_template`` passes the
tokenizer's own ``bos_token``, ``eos_token``, ``pad_token`` and ``unk_token`` (set when it was loaded
from an HF folder) and uses its ``chat_template`` when no template is given. A keyword the template
never reads is an error, not silently ignored (a misspelled ``return_dict`` would otherwise be lost).

Safety: special tokens come only from the template's own text. ``apply_chat_template`` encodes
the special-token strings that the template's literal text (and its ``*_token`` variables such as
``bos_token``) writes as special tokens, and everything that came from the caller's data (every
string in ``messages``, ``tools``, ``documents`` and the other variables, whatever the template
did with it: concatenated, split across messages, lower-cased, replaced, serialized with
``tojson``) as ordinary text. A user writing ``<|eot_id|>`` in any field cannot end their turn.
Message ``role`` and ``content`` holding one of the template's special tokens are also refused
outright, with an error naming the message. ``allow_special_in_content=True`` turns both off for
trusted text. ``render_chat`` and ``tokenize=False`` return plain text, which cannot carry this
distinction: encode chats with ``apply_chat_template``, not by encoding its text with
``allowed_special="all"``.

This module does not know any tokenizer internals: it calls ``tokenizer.encode(text,
allowed_special="all")`` and reads ``tokenizer.special_tokens`` and ``tokenizer.normalization``.
It does not implement tool-call formats or multimodal content lists: a custom template sees every
key of a message (``tool_calls``, ``name``...), and, as in transformers, keys whose value is None
are left out, so an assistant turn of tool calls only may have ``content=None`` or no content (the
built-in layouts need a string content in every message). ``tools`` are JSON schemas (dicts):
a Python function, which transformers turns into its schema, is refused with the call that does.
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache

import jinja2
import jinja2.ext
import jinja2.meta
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

from .dropin import BatchEncoding, _as_tensor
from .errors import ChatTemplateError
from .ids import plain_int
from .normalize import normalize
from .special import special_token_list, split_on_special

__all__ = [
    "BUILTIN_TEMPLATES",
    "ChatTemplateError",
    "apply_chat_template",
    "builtin_name",
    "encode_conversations",
    "render_chat",
    "template_special_tokens",
]


# The layouts are written as Jinja sources so that they can be exported unchanged as a Hugging Face
# ``chat_template``; every newline below is one the model was trained on (seed 003 shows both).
BUILTIN_TEMPLATES = {
    "chatml": (
        "{% for message in messages %}"
        "{% if message['role'] == 'assistant' %}"
        "{{ '<|im_start|>assistant\\n' }}"
        "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"
        "{{ '\\n' }}"
        "{% else %}"
        "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
        "{% endif %}"
        "{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
    # As Meta's template: each content stripped of surrounding whitespace (``| trim``).
    "llama3": (
        "{{ '<|begin_of_text|>' }}"
        "{% for message in messages %}"
        "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"
        "{% if message['role'] == 'assistant' %}"
        "{% generation %}{{ message['content'] | trim + '<|eot_id|>' }}{% endgeneration %}"
        "{% else %}"
        "{{ message['content'] | trim + '<|eot_id|>' }}"
        "{% endif %}"
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
    name = builtin_name(name)
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

    NOTE: ``"chatml"`` inserts content verbatim; ``"llama3"`` strips whitespace around each
    content, as the Llama 3 template on the Hugging Face Hub (and Meta's reference code) does.
    """
    source, clean, context = _prepared(
        messages, builtin_name(template), allow_special_in_content, special_tokens, variables
    )
    return _render(source, clean, bool(add_generation_prompt), context)


def _prepared(messages, template, allow_special_in_content, special_tokens, variables, defaults=None):
    """(Jinja source, checked messages, template variables) for one render. ``variables`` are the
    caller's (each must be one the template reads); ``defaults`` the tokenizer's own."""
    source, is_builtin = _resolve_template(template)
    _check_variables_used(source, variables)
    _check_tools_and_documents(variables)
    clean = _validated_messages(messages, is_builtin)
    if not allow_special_in_content:
        special_tokens = special_token_list(special_tokens, "special_tokens")
        # The tokenizer's settings protect content only where they are special tokens: a
        # pad_token set to an ordinary token ("!") must not forbid it in messages.
        own = {name: value for name, value in (defaults or {}).items() if value in special_tokens}
        protected = set(special_tokens) | _template_tokens(template, is_builtin, {**own, **variables})
        _refuse_special_in_content(clean, protected)
    context = {"tools": None, "documents": None, **(defaults or {}), **variables}
    return source, clean, context


def apply_chat_template(
    tokenizer,
    messages,
    *,
    template=None,
    add_generation_prompt=False,
    continue_final_message=False,
    tokenize=True,
    padding=False,
    truncation=False,
    max_length=None,
    return_tensors=None,
    return_dict=True,
    return_assistant_tokens_mask=False,
    tokenizer_kwargs=None,
    sanitize_control_tokens=False,
    allow_special_in_content=False,
    chat_template=None,
    **template_variables,
):
    """Render ``messages`` and encode them with ``tokenizer``, as transformers 5's
    ``apply_chat_template`` does; ``tokenize=False`` returns the text.

    ``template``: a built-in name or a Jinja source; default the tokenizer's ``chat_template``
    (loaded from an HF folder), else ``"chatml"``. ``chat_template=`` is the same argument under
    transformers' name, so ported calls work unchanged; give one of the two. The tokenizer's ``bos_token``, ``eos_token``,
    ``pad_token`` and ``unk_token`` are template variables unless given here.

    The result is a ``BatchEncoding`` ``{"input_ids": [...], "attention_mask": [1, ...]}`` (keys
    also as attributes, ``.to(device)``, ``model.generate(**inputs)``), transformers 5's default;
    ``return_dict=False`` gives the id list alone (transformers 4's default). With
    ``return_assistant_tokens_mask=True`` also ``"assistant_masks"``: 1 on every token that
    overlaps text the template produced inside ``{% generation %}...{% endgeneration %}``
    (transformers' rule), 0 elsewhere. ``return_tensors="pt"`` or ``"np"`` gives each list as a
    batch of one (shape ``(1, n)``), as transformers does; it has no effect with ``tokenize=False``.

    ``messages`` may also be a list of conversations, as transformers takes a batch: the result
    is then a list per conversation (texts, id lists, or a dict of such lists), and an error
    names the conversation. ``padding`` (``True``/``"longest"``, ``"max_length"``),
    ``truncation`` and ``max_length`` cut and pad the ids as ``tok(...)`` does (assistant masks
    alike, padded with 0); ``tokenizer_kwargs`` may give ``padding_side``,
    ``pad_to_multiple_of`` and ``return_attention_mask``. ``return_tensors`` needs conversations
    of one length, so pad a batch of several lengths.

    ``continue_final_message=True`` leaves the last message open (no end-of-turn after it), for
    the model to go on from its text (a prefilled answer); a string names the field to continue
    (``"reasoning_content"``...), as in transformers. A message with ``reasoning``,
    ``reasoning_content`` or ``thinking`` is given the other two names as well, as transformers 5
    does, so templates that read either name see it.

    The special-token strings in the template's own text become their special-token ids; text
    that came from ``messages`` or other caller data is encoded as ordinary text wherever it lands
    (see the module docstring), unless ``allow_special_in_content=True``. For an ordinary chat the
    ids equal ``tokenizer.encode(text, allowed_special="all")`` of the rendered text.
    ``sanitize_control_tokens`` is taken for transformers' signature: caller text is always
    kept ordinary here. ``sanitize_control_tokens=True`` with ``tokenize=False`` (whose text
    cannot keep it) or with ``allow_special_in_content=True`` (which turns it off) is refused.

    Example:
        >>> import bytepair
        >>> tok = bytepair.train(["Hi there. Hello!"] * 20, mode="byte", vocab_size=270,
        ...                      special_tokens=template_special_tokens("chatml"))
        >>> inputs = apply_chat_template(tok, [{"role": "user", "content": "Hi"}])
        >>> inputs["input_ids"][0] == tok.special_tokens["<|im_start|>"]
        True

    WARNING: a built-in layout needs each of its special tokens in ``tokenizer.special_tokens``;
    without them the markers would be encoded as plain text, so this raises instead.
    """
    if sanitize_control_tokens and not tokenize:
        raise ChatTemplateError(
            "sanitize_control_tokens=True needs tokenize=True, as in transformers: a text cannot tell the "
            "caller's special-token strings from the template's"
        )
    if sanitize_control_tokens and allow_special_in_content:
        raise ChatTemplateError(
            "sanitize_control_tokens=True and allow_special_in_content=True contradict each other: the "
            "second lets the caller's text hold special tokens; give one of them"
        )
    if not tokenize:
        return_dict = False  # as transformers: a text is returned as it is
    if return_assistant_tokens_mask and not (return_dict and tokenize):
        raise ChatTemplateError("return_assistant_tokens_mask=True needs return_dict=True and tokenize=True")
    if continue_final_message and add_generation_prompt:
        raise ChatTemplateError(
            "continue_final_message and add_generation_prompt do not go together: the first leaves the last "
            "message open for the model to go on, the second starts a new assistant turn; give one of them"
        )
    if continue_final_message and return_assistant_tokens_mask:
        raise ChatTemplateError(
            "continue_final_message does not go with return_assistant_tokens_mask, as in transformers"
        )
    shaping = _shaping(padding, truncation, max_length, tokenizer_kwargs)
    if chat_template is not None:
        if template is not None:
            raise ChatTemplateError(
                "give the template once: template= or chat_template= (transformers' name), not both"
            )
        template = chat_template
    options = dict(
        template=template,
        add_generation_prompt=bool(add_generation_prompt),
        continue_final_message=continue_final_message,
        tokenize=tokenize,
        return_assistant_tokens_mask=return_assistant_tokens_mask,
        allow_special_in_content=allow_special_in_content,
        variables=template_variables,
    )
    batch = _is_batch(messages)
    if isinstance(messages, (list, tuple)) and not messages:
        raise ChatTemplateError("messages is empty; a chat needs at least one message")
    results = []
    for index, conversation in enumerate(messages if batch else [messages]):
        if batch and not isinstance(conversation, (list, tuple)):
            raise ChatTemplateError(
                f"conversation {index} is a {type(conversation).__name__}, not a list of messages; a batch "
                "holds one list of messages per conversation"
            )
        try:
            results.append(_apply_to_conversation(tokenizer, conversation, **options))
        except ChatTemplateError as error:
            if not batch:
                raise
            raise ChatTemplateError(f"conversation {index}: {error}") from None
    if not tokenize:
        return results if batch else results[0]
    columns = {key: [result[key] for result in results] for key in results[0]}
    if shaping:
        keep_mask = shaping.pop("return_attention_mask")
        columns = tokenizer._shaped(columns, **shaping)
        if not keep_mask:
            del columns["attention_mask"]
    if return_tensors is not None:
        lengths = sorted({len(ids) for ids in columns["input_ids"]})
        if len(lengths) > 1:
            raise ChatTemplateError(
                f"return_tensors={return_tensors!r} needs conversations of one length, and these have "
                f"{lengths[0]} to {lengths[-1]} tokens; pass padding=True"
            )
        columns = {key: _as_tensor(rows, return_tensors) for key, rows in columns.items()}
    elif not batch:
        columns = {key: rows[0] for key, rows in columns.items()}
    if not return_dict:
        return columns["input_ids"]
    # transformers' BatchEncoding: `.to(device)` and `.input_ids` are what ported code calls next
    return BatchEncoding(columns)


def _shaping(padding, truncation, max_length, tokenizer_kwargs):
    """The options of ``tok._shaped`` for ``apply_chat_template``'s ``padding``, ``truncation``,
    ``max_length`` and ``tokenizer_kwargs``, or None when the ids stay as encoded."""
    extra = dict(tokenizer_kwargs or {})
    unknown = sorted(set(extra) - set(_TOKENIZER_KWARGS))
    if unknown:
        raise ChatTemplateError(
            f"tokenizer_kwargs {unknown[0]!r} is not taken here; it may give "
            f"{', '.join(_TOKENIZER_KWARGS)} (padding, truncation and max_length are arguments of their own)"
        )
    shaping = dict(
        padding=padding,
        truncation=truncation,
        max_length=max_length,
        pad_to_multiple_of=extra.get("pad_to_multiple_of"),
        padding_side=extra.get("padding_side"),
        return_attention_mask=extra.get("return_attention_mask", True),
    )
    unchanged = padding in (False, None, "do_not_pad") and truncation in (False, None, "do_not_truncate")
    return None if unchanged and shaping["return_attention_mask"] else shaping


# What tokenizer_kwargs may hold: the options of tok(...) that chats use.
_TOKENIZER_KWARGS = ("padding_side", "pad_to_multiple_of", "return_attention_mask")


def _apply_to_conversation(
    tokenizer,
    messages,
    *,
    template,
    add_generation_prompt,
    continue_final_message,
    tokenize,
    return_assistant_tokens_mask,
    allow_special_in_content,
    variables,
):
    """One conversation: its text (``tokenize=False``) or ``{"input_ids", "attention_mask"[,
    "assistant_masks"]}``, unpadded."""
    if template is None:
        template = getattr(tokenizer, "chat_template", None) or "chatml"
    template = builtin_name(template)
    special = dict(getattr(tokenizer, "special_tokens", None) or {})
    defaults = _tokenizer_variables(tokenizer)
    source, clean, context = _prepared(messages, template, allow_special_in_content, special, variables, defaults)
    final = None  # the text of the field continued, when continuing
    if continue_final_message:
        clean, final = _tagged_for_continuation(clean, continue_final_message, source)
    if not tokenize:
        return _continued(_render(source, clean, add_generation_prompt, context), final)
    if allow_special_in_content:
        text = _continued(_render(source, clean, add_generation_prompt, context), final)
        segments = None
    else:
        trusted = {name for name, value in context.items() if _is_token_variable(name, value)}
        trusted &= set(defaults) | set(variables)
        text, segments = _render_traced(source, clean, add_generation_prompt, context, trusted)
        text = _continued(text, final)
        segments = _first_characters(segments, len(text))
    if isinstance(template, str) and template in BUILTIN_TEMPLATES:
        _check_tokenizer_has_tokens(template, special)
    _check_normalization_keeps_markers(text, getattr(tokenizer, "normalization", None), special)
    if segments is None:
        ids = tokenizer.encode(text, allowed_special="all")
    else:
        ids = _encode_segments(tokenizer, segments, special)
    result = {"input_ids": ids, "attention_mask": [1] * len(ids)}
    if return_assistant_tokens_mask:
        spans = _generation_spans(source, clean, add_generation_prompt, context, text)
        result["assistant_masks"] = _assistant_mask(tokenizer, ids, text, spans)
    return result


def _is_batch(messages):
    """A list of conversations rather than one, as transformers tells them apart: its first item
    is itself a list of messages."""
    return isinstance(messages, (list, tuple)) and bool(messages) and isinstance(messages[0], (list, tuple))


# --- continuing the final message ---------------------------------------------------------------
#
# As transformers does it: a tag is appended to the field being continued, the chat rendered, and
# the text cut where the tag begins, so whatever the template writes after the message (its
# end-of-turn token, the next header) is left out. A template that strips the content also strips
# the tag's trailing space; then the whitespace before the tag goes too, as the template would
# have stripped it at the end of the message.

_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
# The names transformers 5 gives a message's reasoning, each copied to the others.
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def _tagged_for_continuation(messages, continue_final_message, source):
    """The messages with the continuation tag after the text of the last one's field, and that text."""
    if not messages:
        raise ChatTemplateError("continue_final_message needs a message to continue, and the conversation is empty")
    field = continue_final_message if isinstance(continue_final_message, str) else "content"
    last = dict(messages[-1])
    text = last.get(field)
    if not isinstance(text, str):
        found = "none" if text is None else f"a {type(text).__name__}"
        raise ChatTemplateError(
            f"continue_final_message: the last message's {field!r} is {found}; it must be a string to continue"
        )
    fields = [field]
    if field in _REASONING_FIELDS:
        fields = [name for name in _REASONING_FIELDS if last.get(name) == text]
    if not any(name in source for name in fields):
        raise ChatTemplateError(
            f"continue_final_message: the chat template never writes the field {field!r}, so it cannot be continued"
        )
    for name in fields:
        last[name] = last[name] + _CONTINUE_TAG
    return [*messages[:-1], last], text


def _continued(text, final):
    """The rendered ``text`` cut where the continuation tag begins, ``final`` being the text of the
    field continued (unchanged when it is None). As in transformers, that text must appear in the
    render as it is: a template that escapes it (``| tojson``) leaves nothing to continue from."""
    if final is None:
        return text
    at = text.rfind(_CONTINUE_TAG.strip())
    if at < 0 or final.strip() not in text:
        raise ChatTemplateError(
            "continue_final_message: the final message's text does not appear in the rendered chat (the "
            "template changes it), so there is no place to continue from"
        )
    if text[at : at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return text[:at]
    return text[:at].rstrip()


def _first_characters(segments, length):
    """The ``(text, is_callers)`` segments cut after their first ``length`` characters."""
    kept = []
    for text, is_callers in segments:
        if length <= 0:
            break
        kept.append((text[:length], is_callers))
        length -= len(text)
    return [(text, is_callers) for text, is_callers in kept if text]


def encode_conversations(
    tokenizer, conversations, *, template=None, max_length=None, skip_overlong=False, **template_variables
):
    """Supervised fine-tuning data: ``{"input_ids", "attention_mask", "labels"}``, one list per
    conversation, the labels being the ids on assistant tokens and -100 elsewhere (the value
    PyTorch's cross-entropy and HF trainers ignore).

    ``max_length`` cuts a conversation that is longer at the end of its last assistant turn that
    fits whole, so no turn is ever kept in part; a conversation whose first assistant turn does
    not fit raises ``ChatTemplateError`` naming it, or with ``skip_overlong=True`` is left out
    (the lists then have fewer rows than ``conversations``, as ``datasets.map(...,
    batched=True)`` allows).

    Example:
        >>> import bytepair
        >>> tok = bytepair.train(["Hi there. Hello!"] * 20, mode="byte", vocab_size=270,
        ...                      special_tokens=template_special_tokens("chatml"))
        >>> batch = encode_conversations(tok, [[{"role": "user", "content": "Hi"},
        ...                                     {"role": "assistant", "content": "Hello!"}]])
        >>> ids, labels = batch["input_ids"][0], batch["labels"][0]
        >>> tok.decode([i for i, label in zip(ids, labels) if label != -100])
        'Hello!<|im_end|>'

    NOTE: the assistant tokens are those the template marks with ``{% generation %}`` (the
    built-in templates mark each assistant content and its end-of-turn token); a template
    without it gives no labels, which is refused rather than training on nothing.
    """
    max_length = plain_int(max_length)
    if max_length is not None and (not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1):
        raise ChatTemplateError(f"max_length must be a positive integer or None, not {max_length!r}")
    if isinstance(conversations, (str, dict)) or not hasattr(conversations, "__iter__"):
        raise ChatTemplateError(
            f"conversations must be a list of conversations (each a list of messages), not {type(conversations).__name__}"
        )
    batch = {"input_ids": [], "attention_mask": [], "labels": []}
    for index, messages in enumerate(conversations):
        if _is_batch(messages):
            raise ChatTemplateError(
                f"conversation {index} is a list of conversations, not of messages; pass every "
                "conversation in one flat list"
            )
        try:
            encoded = apply_chat_template(
                tokenizer,
                messages,
                template=template,
                return_dict=True,
                return_assistant_tokens_mask=True,
                **template_variables,
            )
        except ChatTemplateError as error:
            # "message 1 has content None" alone does not say which of thousands of
            # conversations to fix.
            raise ChatTemplateError(f"conversation {index}: {error}") from None
        ids, mask = encoded["input_ids"], encoded["assistant_masks"]
        runs = _runs_of_ones(mask)
        if not runs:
            raise ChatTemplateError(
                f"conversation {index} has no assistant tokens: its template marks none with "
                "{% generation %} or it has no assistant message; add one, or use a template that "
                "marks assistant turns"
            )
        if max_length is not None and len(ids) > max_length:
            fitting = [end for _, end in runs if end <= max_length]
            if not fitting and skip_overlong:
                continue
            if not fitting:
                raise ChatTemplateError(
                    f"conversation {index}: its first assistant turn ends at token {runs[0][1]}, "
                    f"beyond max_length={max_length}; raise max_length, or pass skip_overlong=True to leave such "
                    "conversations out"
                )
            ids, mask = ids[: fitting[-1]], mask[: fitting[-1]]
        batch["input_ids"].append(ids)
        batch["attention_mask"].append([1] * len(ids))
        batch["labels"].append([token if marked else -100 for token, marked in zip(ids, mask)])
    return batch


def _runs_of_ones(mask):
    """``[(start, end)]`` of each run of 1s in ``mask``."""
    runs = []
    start = None
    for position, value in enumerate([*mask, 0]):
        if value and start is None:
            start = position
        elif not value and start is not None:
            runs.append((start, position))
            start = None
    return runs


def _tokenizer_variables(tokenizer):
    """The tokenizer's own ``*_token`` settings, as transformers passes them to templates."""
    found = {}
    for name in ("bos_token", "eos_token", "pad_token", "unk_token"):
        value = getattr(tokenizer, name, None)
        if isinstance(value, str) and value:
            found[name] = value
    return found


# Arguments of transformers' signature that every template is given; None is their "not given".
# A template without tool or document support leaves them out, as in transformers, where the
# same call is made for every model ("if the template does not support function calling, this
# argument will have no effect").
_OPTIONAL_DATA = ("tools", "documents")


def _check_variables_used(source, variables):
    """A keyword that the template never reads is a mistake (a misspelling, or an option this
    function does not have), not something to pass on silently. The ``*_token`` strings are
    exempt: transformers passes every one of the tokenizer's to every template; so are
    ``tools`` and ``documents``, arguments of its signature."""
    if not variables:
        return
    used = _variables_read(source)
    unused = sorted(
        name
        for name, value in variables.items()
        if name not in used and not _is_token_variable(name, value) and name not in _OPTIONAL_DATA
    )
    if unused:
        reads = ", ".join(sorted(used - {"messages", "add_generation_prompt"})) or "no other variables"
        raise ChatTemplateError(
            f"unknown keyword {unused[0]!r}: the chat template does not read it (it reads "
            f"messages, add_generation_prompt and {reads}); remove it or check its spelling"
        )


def _check_tools_and_documents(variables):
    """``tools`` must be JSON schemas (dicts) and ``documents`` dicts, as transformers checks; a
    Python function, which transformers turns into its schema from the docstring, is refused
    with the call that does that (a template would write it as ``<function ...>``, or fail)."""
    for name in _OPTIONAL_DATA:
        items = variables.get(name)
        if items is None:
            continue
        if not isinstance(items, (list, tuple)):
            raise ChatTemplateError(f"{name} must be a list of dicts, not {_clipped(items)}")
        for index, item in enumerate(items):
            if isinstance(item, Mapping):
                continue
            if name == "tools" and callable(item):
                function = getattr(item, "__name__", "the function")
                raise ChatTemplateError(
                    f"tools[{index}] is a Python function ({function}); pass its JSON schema, a dict "
                    f"(transformers.utils.get_json_schema({function}) writes it from the docstring)"
                )
            raise ChatTemplateError(f"{name}[{index}] is {_clipped(item)}; each must be a dict")


@lru_cache(maxsize=64)
def _variables_read(source):
    try:
        return frozenset(jinja2.meta.find_undeclared_variables(_environment().parse(source)))
    except jinja2.TemplateSyntaxError:
        _compiled(source)  # raises the error that names the line
        raise


def _is_token_variable(name, value):
    """``bos_token``, ``eos_token``...: the tokenizer's own markers, part of the template."""
    return name.endswith("_token") and isinstance(value, str) and bool(value)


# --- resolving and validating -----------------------------------------------------------------


def builtin_name(template):
    """A built-in layout's name however it is written (``"Llama-3"``, ``"llama_3"`` are
    ``"llama3"``), as pattern names are; any other value as it is.

    Example:
        >>> builtin_name("ChatML"), builtin_name("llama-3")
        ('chatml', 'llama3')
    """
    if isinstance(template, str) and len(template) < 32:
        folded = template.lower().replace("-", "").replace("_", "")
        if folded in BUILTIN_TEMPLATES:  # the names are lowercase, without separators
            return folded
    return template


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
        raise ChatTemplateError(f"template must be a built-in name or a Jinja source string, not {template!r}")
    if template in BUILTIN_TEMPLATES:
        return BUILTIN_TEMPLATES[template], True
    # A string with no Jinja markup cannot render messages, so it is taken as a misspelled name.
    if "{{" not in template and "{%" not in template:
        _check_builtin_name(template)
    return template, False


def _validated_messages(messages, is_builtin):
    """Plain-dict copies of the messages, after checking their shape; raises ChatTemplateError."""
    if not isinstance(messages, (list, tuple)):
        if isinstance(messages, Mapping) and "messages" in messages:  # a dataset row
            raise ChatTemplateError(
                "messages is a dict with a 'messages' key (a dataset row?); pass row['messages'], "
                "the list of dicts with 'role' and 'content'"
            )
        raise ChatTemplateError(f"messages must be a list of dicts with 'role' and 'content', not {_clipped(messages)}")
    return [_validated_message(index, message, is_builtin) for index, message in enumerate(messages)]


def _validated_message(index, message, is_builtin):
    if not isinstance(message, Mapping):
        raise ChatTemplateError(f"message {index} must be a dict with 'role' and 'content', not {_clipped(message)}")
    if "role" not in message:
        raise ChatTemplateError(f"message {index} has no 'role': {_clipped(dict(message))}; add one")
    role = message["role"]
    if is_builtin and role not in BUILTIN_ROLES:
        allowed = ", ".join(repr(r) for r in BUILTIN_ROLES)
        raise ChatTemplateError(
            f"message {index} has role {role!r}; the built-in templates accept {allowed} "
            "(use a custom template for other roles)"
        )
    if not isinstance(role, str) or not role:
        raise ChatTemplateError(f"message {index} has role {role!r}; a role must be a non-empty string")
    if not is_builtin:
        # As transformers does: keys whose value is None are left out, so an assistant turn of
        # tool calls only (OpenAI's content=None, or no content at all) reaches the template.
        message = {key: value for key, value in message.items() if value is not None}
        reasoning = next((message[name] for name in _REASONING_FIELDS if name in message), None)
        if reasoning is not None:  # as transformers 5: every template finds it under the name it reads
            message = {"thinking": reasoning, **message, "reasoning_content": reasoning}
        if "content" not in message:
            return message
    if "content" not in message:
        raise ChatTemplateError(f"message {index} has no 'content': {_clipped(dict(message))}; add one")
    content = message["content"]
    if not isinstance(content, str):
        # A built-in layout writes content only; a tool-call turn (content None) needs a
        # template that renders its tool_calls.
        hint = (
            "; a built-in template renders text content only, so give tool calls a custom template"
            if is_builtin
            else ""
        )
        raise ChatTemplateError(
            f"message {index} has content {_clipped(content)} of type {type(content).__name__}; "
            f"content must be a string{hint}"
        )
    return dict(message)


def _clipped(value):
    """``repr(value)``, cut to a length an error line can show (a message may hold a book)."""
    shown = repr(value)
    return shown if len(shown) <= 200 else shown[:197] + "..."


def _template_tokens(template, is_builtin, variables):
    """Special-token strings a template writes, as far as they can be known without a tokenizer."""
    if is_builtin:
        return set(BUILTIN_SPECIAL_TOKENS[template])
    return {value for name, value in variables.items() if _is_token_variable(name, value)}


def _refuse_special_in_content(messages, protected):
    for index, message in enumerate(messages):
        for field in ("role", "content"):
            found = sorted(token for token in protected if token and token in message.get(field, ""))
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
    return [part for part, is_special in split_on_special(text, frozenset(special)) if is_special]


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
    value, holds_callers = _unmarked_json(value)
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    marks = _MARKS.get()
    # The JSON of caller data is the caller's text as a whole, quotes and braces included.
    return _wrap(text, marks) if holds_callers and marks else text


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
        body = caller()
        marks = _GENERATION_MARKS.get()
        return body if marks is None else marks[0] + body + marks[1]


# Jinja's filters that take a string and give a string; on a caller's string they run on its
# plain text and give a caller's string back (``title`` would see the marker as the first letter).
_TEXT_FILTERS = (
    "capitalize",
    "center",
    "indent",
    "lower",
    "replace",
    "reverse",
    "striptags",
    "title",
    "trim",
    "truncate",
    "upper",
    "wordcount",
    "wordwrap",
)


def _on_plain_text(jinja_filter):
    pass_arg = getattr(jinja_filter, "jinja_pass_arg", None)
    position = 0 if pass_arg is None else 1  # after the environment or context Jinja passes

    def text_filter(*args, **kwargs):
        value = args[position] if len(args) > position else None
        if not isinstance(value, _Data):
            return jinja_filter(*args, **kwargs)
        args = (*args[:position], value._plain, *args[position + 1 :])
        result = jinja_filter(*args, **kwargs)
        return value._again(str(result)) if isinstance(result, str) else result

    if pass_arg is not None:
        text_filter.jinja_pass_arg = pass_arg
    return text_filter


# Jinja's sandbox bounds range() (MAX_RANGE, 100,000); these bound the other ways a template makes
# a huge value out of a small source: "x" * 10**10 (a MemoryError, or gigabytes filled) and
# 10 ** 10000000000 (a big-int power Ctrl-C cannot stop, which Jinja would even fold while compiling).
# A chat render is text for a model's context: far below either.
MAX_PRODUCT_ITEMS = 1 << 24
MAX_POWER_BITS = 1 << 16


# A number in a format string (a width or precision: "%10000000000s", "{:>10000000000}").
_FORMAT_NUMBER = re.compile(r"%[^a-zA-Z%]*?(\d+)|\{[^{}]*?(\d+)[^{}]*\}")


def _check_sizes(numbers, what):
    """Refuse a width, count or length past ``MAX_PRODUCT_ITEMS`` given to ``what``."""
    for number in numbers:
        if isinstance(number, int) and not isinstance(number, bool) and number > MAX_PRODUCT_ITEMS:
            raise jinja2.exceptions.SecurityError(f"{what} given {number}, more than {MAX_PRODUCT_ITEMS} items")


def _check_format(text, what):
    if isinstance(text, str):
        _check_sizes((int(n) for match in _FORMAT_NUMBER.finditer(text) for n in match.groups() if n), what)


def _sized(function, what):
    """``function`` (a filter that makes text of a size it is given: center, indent, format),
    refusing a size past ``MAX_PRODUCT_ITEMS``."""

    def checked(*args, **kwargs):
        _check_sizes((*args, *kwargs.values()), what)
        if what == "format" and args:
            _check_format(args[0], what)  # "%10000000000s"|format("x")
        return function(*args, **kwargs)

    if hasattr(function, "jinja_pass_arg"):  # Jinja passes the environment or context first
        checked.jinja_pass_arg = function.jinja_pass_arg
    return checked


def _lipsum(n=5, *args, **kwargs):
    """Jinja's ``lipsum``, of at most ``MAX_LIPSUM`` paragraphs (a million took 47 s)."""
    if isinstance(n, int) and n > MAX_LIPSUM:
        raise jinja2.exceptions.SecurityError(f"lipsum given {n} paragraphs, more than {MAX_LIPSUM}")
    return jinja2.utils.generate_lorem_ipsum(n, *args, **kwargs)


MAX_LIPSUM = 1000


class _ChatEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, with ``*``, ``**``, ``%`` and sized calls (``str.center``, ``str.format``,
    ``lipsum``...) checked for the size of what they would make."""

    intercepted_binops = frozenset({"*", "**", "%"})

    def call(self, __context, __obj, *args, **kwargs):
        target = getattr(__obj, "__wrapped__", __obj)  # the sandbox's wrapper of str.format keeps it there
        owner = getattr(target, "__self__", None)
        if isinstance(owner, str):  # "x".center(10**10), "{:>10000000000}".format("x")
            name = getattr(target, "__name__", "a method")
            _check_sizes((*args, *kwargs.values()), f"str.{name}")
            if name in ("format", "format_map"):
                _check_format(owner, f"str.{name}")
        return super().call(__context, __obj, *args, **kwargs)

    def call_binop(self, context, operator, left, right):
        if operator == "%":
            _check_format(left, "%")
            _check_sizes(right if isinstance(right, tuple) else (right,), "%")
        elif operator == "*":
            sequence, count = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(count, int) and isinstance(sequence, (str, list, tuple)):
                if len(sequence) * count > MAX_PRODUCT_ITEMS:
                    raise jinja2.exceptions.SecurityError(
                        f"{type(sequence).__name__} of {len(sequence)} times {count} would hold more than "
                        f"{MAX_PRODUCT_ITEMS} items"
                    )
        elif isinstance(left, int) and isinstance(right, int) and right > 0 and abs(left) > 1:
            if right * abs(left).bit_length() > MAX_POWER_BITS:
                raise jinja2.exceptions.SecurityError(f"{left} ** {right} would have more than {MAX_POWER_BITS} bits")
        return super().call_binop(context, operator, left, right)


@lru_cache(maxsize=1)
def _environment():
    environment = _ChatEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationBlock, jinja2.ext.loopcontrols],
    )
    for name in _TEXT_FILTERS:
        environment.filters[name] = _on_plain_text(environment.filters[name])
    environment.filters["tojson"] = _tojson
    for name in ("center", "indent", "format"):
        environment.filters[name] = _sized(environment.filters[name], name)
    environment.globals["lipsum"] = _lipsum
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
        return template.render(**context, messages=messages, add_generation_prompt=add_generation_prompt)
    except jinja2.TemplateError as error:
        # raise_exception(...) and undefined names land here: the template rejected the input.
        raise ChatTemplateError(f"chat template failed to render: {error}") from None
    except (ArithmeticError, TypeError, ValueError, LookupError, AttributeError, RecursionError) as error:
        # the template's own Python went wrong ({{ 1/0 }}, {{ content + 5 }}, a macro calling itself)
        raise ChatTemplateError(
            f"chat template failed to render: {type(error).__name__}: {error}; fix the template "
            "or the values it is given"
        ) from None


# --- which text came from the caller: markers around every caller string --------------------
#
# A template may do anything with the caller's strings (concatenate them, lower-case them, split
# them, serialize them as JSON), so a check on message content alone cannot tell whether a
# special token's string in the output came from the template or from the data. Instead each
# caller string enters the template wrapped in two Unicode noncharacters (``_Data`` below), and
# the markers travel with the text through every operation; after rendering, the text between
# markers is the caller's, the rest is the template's own. ``_Data`` behaves as its plain text for
# the operations templates use on strings (==, hashing, len, slicing, strip/trim, split,
# startswith, capitalize...), and the render is checked against a plain render: if the two
# differ once the markers are removed, the template did something the markers cannot follow and
# the render is refused rather than guessed.

# Noncharacters are reserved for a program's internal use and never meant for interchange; two
# that occur nowhere in the render's inputs are chosen per render.
_NONCHARACTERS = [chr(code) for code in range(0xFDD0, 0xFDF0)]
_MARKS = contextvars.ContextVar("bytepair_chat_marks", default=None)
# Set while rendering to find what ``{% generation %}`` blocks produced.
_GENERATION_MARKS = contextvars.ContextVar("bytepair_chat_generation", default=None)


def _plain_of(value):
    return value._plain if isinstance(value, _Data) else value


class _Data(str):
    """A caller's string inside a render: marker + text + marker, acting as the plain text."""

    def _again(self, text):
        return _wrap(text, self._marks)

    def __eq__(self, other):
        return self._plain == _plain_of(other)

    def __ne__(self, other):
        return self._plain != _plain_of(other)

    def __lt__(self, other):
        return self._plain < _plain_of(other)

    def __le__(self, other):
        return self._plain <= _plain_of(other)

    def __gt__(self, other):
        return self._plain > _plain_of(other)

    def __ge__(self, other):
        return self._plain >= _plain_of(other)

    def __hash__(self):
        return hash(self._plain)

    def __len__(self):
        return len(self._plain)

    def __bool__(self):
        return bool(self._plain)

    def __contains__(self, item):
        return _plain_of(item) in self._plain

    def __getitem__(self, key):
        return self._again(self._plain[key])

    def __iter__(self):
        return (self._again(character) for character in self._plain)

    def __str__(self):
        return self

    def __repr__(self):
        return repr(self._plain)

    def __format__(self, spec):
        return self._again(format(self._plain, spec))

    def join(self, items):
        return self._again(self._plain.join(_plain_of(item) for item in items))

    def replace(self, old, new, count=-1):
        return self._again(self._plain.replace(_plain_of(old), _plain_of(new), count))

    def split(self, sep=None, maxsplit=-1):
        return [self._again(part) for part in self._plain.split(_plain_of(sep), maxsplit)]

    def rsplit(self, sep=None, maxsplit=-1):
        return [self._again(part) for part in self._plain.rsplit(_plain_of(sep), maxsplit)]

    def splitlines(self, keepends=False):
        return [self._again(part) for part in self._plain.splitlines(keepends)]

    def partition(self, sep):
        return tuple(self._again(part) for part in self._plain.partition(_plain_of(sep)))

    def rpartition(self, sep):
        return tuple(self._again(part) for part in self._plain.rpartition(_plain_of(sep)))

    def startswith(self, prefix, *bounds):
        prefix = tuple(map(_plain_of, prefix)) if isinstance(prefix, tuple) else _plain_of(prefix)
        return self._plain.startswith(prefix, *bounds)

    def endswith(self, suffix, *bounds):
        suffix = tuple(map(_plain_of, suffix)) if isinstance(suffix, tuple) else _plain_of(suffix)
        return self._plain.endswith(suffix, *bounds)

    def encode(self, *args, **kwargs):
        return self._plain.encode(*args, **kwargs)


def _text_method(name):
    def method(self, *args):
        return self._again(getattr(self._plain, name)(*map(_plain_of, args)))

    method.__name__ = name
    return method


def _plain_method(name):
    def method(self, *args):
        return getattr(self._plain, name)(*map(_plain_of, args))

    method.__name__ = name
    return method


for _name in (
    "strip",
    "lstrip",
    "rstrip",
    "lower",
    "upper",
    "capitalize",
    "title",
    "swapcase",
    "casefold",
    "center",
    "ljust",
    "rjust",
    "zfill",
    "expandtabs",
    "removeprefix",
    "removesuffix",
):
    setattr(_Data, _name, _text_method(_name))
for _name in (
    "find",
    "rfind",
    "index",
    "rindex",
    "count",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
):
    setattr(_Data, _name, _plain_method(_name))


def _wrap(text, marks):
    data = _Data(marks[0] + text + marks[1])
    data._plain = text
    data._marks = marks
    return data


def _marked(value, marks):
    """``value`` with every string in it (keys too) wrapped as ``_Data``."""
    if isinstance(value, str):
        return _wrap(value, marks)
    if isinstance(value, Mapping):
        return {_marked(key, marks): _marked(item, marks) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_marked(item, marks) for item in value)
    return value


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _choose_marks(*values, skip=()):
    used = set(skip)
    for value in values:
        for text in _strings(value):
            used.update(character for character in text if "\ufdd0" <= character <= "\ufdef")
    free = [character for character in _NONCHARACTERS if character not in used]
    if len(free) < 2:
        raise ChatTemplateError(
            "the messages use every Unicode noncharacter U+FDD0..U+FDEF, so their text cannot be "
            "told apart from the template's; remove those characters"
        )
    return free[0], free[1]


def _without(marks, text):
    """``text`` with both markers taken out: what the render gives without them."""
    return text.replace(marks[0], "").replace(marks[1], "")


def _unmarked_json(value):
    """``value`` with ``_Data`` replaced by plain strings, and whether there was any."""
    if isinstance(value, _Data):
        return value._plain, True
    if isinstance(value, Mapping):
        found = False
        result = {}
        for key, item in value.items():
            key, key_found = _unmarked_json(key)
            item, item_found = _unmarked_json(item)
            result[key] = item
            found = found or key_found or item_found
        return result, found
    if isinstance(value, (list, tuple)):
        pairs = [_unmarked_json(item) for item in value]
        return [item for item, _ in pairs], any(found for _, found in pairs)
    return value, False


def _render_traced(source, messages, add_generation_prompt, context, trusted):
    """``(text, segments)``: the plain render and its ``(text, is_callers)`` parts.

    ``trusted`` names the context variables that are the template's (``bos_token``...); every
    other string, in ``messages`` and in the rest of ``context``, is the caller's.
    """
    plain = _render(source, messages, add_generation_prompt, context)
    data_context = {key: value for key, value in context.items() if key not in trusted}
    marks = _choose_marks(source, messages, context)
    marked_context = {**context, **_marked(data_context, marks)}
    token = _MARKS.set(marks)
    try:
        traced = _render(source, _marked(messages, marks), add_generation_prompt, marked_context)
    finally:
        _MARKS.reset(token)
    if _without(marks, traced) != plain:
        raise ChatTemplateError(
            "the chat template transforms message text in a way whose result cannot be traced "
            "back to the template or the messages, so special tokens in it cannot be told apart; "
            "pass allow_special_in_content=True if the messages are trusted, or tokenize=False "
            "to get the text"
        )
    return plain, _segments(traced, marks)


def _segments(traced, marks):
    """``[(text, is_callers)]`` from a marked render. A marker without its partner (a template
    that cut a caller string) makes everything it might cover the caller's.
    """
    opening = marks[0]
    owner = []  # (text, depth > 0) per run between markers
    depth = 0
    start = 0
    for position, character in enumerate(traced):
        if character not in marks:
            continue
        owner.append([traced[start:position], depth > 0])
        start = position + 1
        if character == opening:
            depth += 1
        elif depth > 0:
            depth -= 1
        else:
            for run in owner:  # a closing marker whose opening was cut off
                run[1] = True
    owner.append([traced[start:], depth > 0])
    segments = []
    for text, is_callers in owner:
        if not text:
            continue
        if segments and segments[-1][1] == is_callers:
            segments[-1] = (segments[-1][0] + text, is_callers)
        else:
            segments.append((text, is_callers))
    return segments


def _encode_segments(tokenizer, segments, special):
    """Ids of a traced render: special tokens only where the template's own text holds them;
    the caller's text, and everything between two special tokens, as ordinary text.

    The ordinary text between two special tokens is encoded in one piece, exactly as
    ``encode(text, allowed_special="all")`` would, so an ordinary chat gets the same ids.
    """
    ids = []
    pending = []
    for text, is_callers in segments:
        parts = [(text, False)] if is_callers else split_on_special(text, frozenset(special))
        for part, is_special in parts:
            if not is_special:
                pending.append(part)
                continue
            if pending:
                ids.extend(tokenizer.encode("".join(pending), disallowed_special=()))
                pending = []
            ids.append(special[part])
    if pending:
        ids.extend(tokenizer.encode("".join(pending), disallowed_special=()))
    return ids


# --- assistant masks ----------------------------------------------------------------------------


def _generation_spans(source, messages, add_generation_prompt, context, plain):
    """``[(start, end)]`` character spans of ``plain`` that ``{% generation %}`` blocks produced."""
    marks = _choose_marks(source, messages, context)
    token = _GENERATION_MARKS.set(marks)
    try:
        marked = _render(source, messages, add_generation_prompt, context)
    finally:
        _GENERATION_MARKS.reset(token)
    spans = []
    opened = []
    position = 0  # in the plain text
    for character in marked:
        if character == marks[0]:
            opened.append(position)
        elif character == marks[1] and opened:
            start = opened.pop()
            if not opened and position > start:  # a nested block lies inside its outer one
                spans.append((start, position))
        else:
            position += 1
    if _without(marks, marked) != plain:
        raise ChatTemplateError(
            "the chat template uses the output of a {% generation %} block as a value, so the "
            "assistant tokens cannot be located; write the block's output directly"
        )
    return spans


def _assistant_mask(tokenizer, ids, text, spans):
    """1 on each token whose characters overlap a span (transformers' rule), else 0."""
    try:
        offsets = tokenizer._char_spans(text, ids)
    except ValueError:
        raise ChatTemplateError(
            "the tokenizer's normalization changes the rendered chat, so its tokens cannot be "
            "lined up with the assistant text; use a tokenizer without normalization for masks"
        ) from None
    mask = [0] * len(ids)
    span = 0
    for index, (start, end) in enumerate(offsets):
        while span < len(spans) and start >= spans[span][1]:
            span += 1
        if span == len(spans):
            break
        if end > spans[span][0] and end > start:
            mask[index] = 1
    return mask
