"""Assistant masks and fine-tuning data from the built-in templates, checked against the spans
of the rendered text (the transformers comparison is in tests/peers/test_dropin.py)."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

import bytepair
from bytepair.chat import (
    apply_chat_template,
    encode_conversations,
    render_chat,
    template_special_tokens,
)
from bytepair.errors import ChatTemplateError
from datafiles import package_env

CORPUS = "The assistant answers briefly. Hello there, how are you? Fine, thanks! 你好 🌍 " * 40

CHAT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi 🌍"},
    {"role": "assistant", "content": "  Hello there!\n"},
    {"role": "user", "content": "How are you?"},
    {"role": "assistant", "content": "Fine, 你好."},
]

END_OF_TURN = {"llama3": "<|eot_id|>", "chatml": "<|im_end|>"}


@pytest.fixture(scope="module")
def tok():
    specials = template_special_tokens("llama3") + template_special_tokens("chatml")
    return bytepair.train(CORPUS, mode="byte", vocab_size=320, pattern="gpt2", special_tokens=specials)


def expected_assistant_text(name, message):
    content = message["content"].strip() if name == "llama3" else message["content"]
    return content + END_OF_TURN[name]


@pytest.mark.parametrize("name", ["llama3", "chatml"])
def test_builtin_masks_cover_exactly_each_assistant_content_and_its_end_of_turn(tok, name):
    result = apply_chat_template(tok, CHAT, template=name, return_dict=True, return_assistant_tokens_mask=True)
    ids, mask = result["input_ids"], result["assistant_masks"]
    assert result["attention_mask"] == [1] * len(ids)
    assert ids == apply_chat_template(tok, CHAT, template=name, return_dict=False)
    # The masked runs, decoded, are the assistant texts of the rendered chat, in order.
    runs, current = [], []
    for token, marked in zip(ids, mask):
        if marked:
            current.append(token)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    expected = [expected_assistant_text(name, m) for m in CHAT if m["role"] == "assistant"]
    assert [tok.decode(run) for run in runs] == expected
    text = render_chat(CHAT, name)
    assert all(piece in text for piece in expected)


def test_mask_needs_return_dict(tok):
    with pytest.raises(ChatTemplateError, match="return_dict=True"):
        apply_chat_template(tok, CHAT, template="chatml", return_assistant_tokens_mask=True, return_dict=False)


def test_unknown_keywords_are_refused_not_swallowed(tok):
    with pytest.raises(ChatTemplateError, match="unknown keyword 'retrun_dict'"):
        apply_chat_template(tok, CHAT, template="chatml", retrun_dict=True, return_dict=False)
    with pytest.raises(ChatTemplateError, match="unknown keyword 'date'"):
        render_chat(CHAT, "llama3", date="today")
    # A variable the template reads is fine, and so are the tokenizer's *_token strings.
    assert (
        render_chat(CHAT[:1], "{{ greeting }}{{ messages[0]['content'] }}", greeting="> ", eos_token="x")
        == "> Be brief."
    )


@pytest.mark.parametrize("kind", ["np", "pt"])
def test_return_tensors_gives_a_batch_of_one_as_transformers_does(tok, kind):
    if kind == "pt":
        pytest.importorskip("torch")
    ids = apply_chat_template(tok, CHAT, template="chatml", return_dict=False)
    tensor = apply_chat_template(tok, CHAT, template="chatml", return_tensors=kind, return_dict=False)
    assert tuple(tensor.shape) == (1, len(ids)) and tensor.tolist() == [ids]
    lists = apply_chat_template(tok, CHAT, template="chatml", return_dict=True, return_assistant_tokens_mask=True)
    tensors = apply_chat_template(
        tok, CHAT, template="chatml", return_dict=True, return_assistant_tokens_mask=True, return_tensors=kind
    )
    assert {key: value.tolist() for key, value in tensors.items()} == {key: [value] for key, value in lists.items()}
    # What ported code does next with transformers' BatchEncoding: attributes, and .to(device).
    assert tensors.input_ids.tolist() == [ids] and lists.assistant_masks == lists["assistant_masks"]
    if kind == "pt":
        assert tensors.to("cpu")["input_ids"].tolist() == [ids]
    assert apply_chat_template(tok, CHAT, template="chatml", tokenize=False, return_tensors=kind) == render_chat(
        CHAT, "chatml"
    )


def test_to_moves_the_tensors_in_place_as_transformers_does(tok):
    torch = pytest.importorskip("torch")
    inputs = apply_chat_template(tok, CHAT, template="chatml", add_generation_prompt=True, return_tensors="pt")
    # ported code often calls inputs.to(device) without assigning the result; "meta" is a device
    # every PyTorch build has
    assert inputs.to("meta") is inputs
    assert inputs.input_ids.device.type == inputs["attention_mask"].device.type == "meta"
    inputs = apply_chat_template(tok, CHAT, template="chatml", return_tensors="pt")
    assert inputs.to(torch.device("cpu"), non_blocking=True) is inputs
    with pytest.warns(UserWarning, match="only a device"):
        inputs.to(torch.float16)  # a cast would turn the ids into floats
    assert inputs.input_ids.dtype == torch.int64


def test_the_default_result_is_a_batch_encoding_as_in_transformers_5(tok):
    inputs = apply_chat_template(tok, CHAT, template="chatml")
    ids = apply_chat_template(tok, CHAT, template="chatml", return_dict=False)
    assert inputs["input_ids"] == inputs.input_ids == ids
    assert inputs["attention_mask"] == [1] * len(ids)
    assert apply_chat_template(tok, CHAT, template="chatml", tokenize=False) == render_chat(CHAT, "chatml")


@pytest.mark.parametrize("name", ["llama3", "chatml"])
def test_continue_final_message_leaves_the_last_turn_open(tok, name):
    prefilled = [*CHAT[:4], {"role": "assistant", "content": "Fine, "}]
    text = apply_chat_template(tok, prefilled, template=name, tokenize=False, continue_final_message=True)
    full = render_chat(prefilled, name)
    # the text up to the prefilled words, without the end of the turn that follows them
    assert full.startswith(text)
    assert text.endswith("Fine," if name == "llama3" else "Fine, ")
    assert END_OF_TURN[name] not in full[len(render_chat(CHAT[:4], name)) :][: len(text) - len(full)]
    ids = apply_chat_template(tok, prefilled, template=name, continue_final_message=True, return_dict=False)
    assert tok.decode(ids) == text
    with pytest.raises(ChatTemplateError, match="do not go together"):
        apply_chat_template(tok, prefilled, template=name, continue_final_message=True, add_generation_prompt=True)
    with pytest.raises(ChatTemplateError, match="'thinking' is none"):
        apply_chat_template(tok, prefilled, template=name, continue_final_message="thinking")


def test_padding_and_truncation_shape_ids_and_masks_alike(tok):
    tok = copy.deepcopy(tok)
    tok.pad_token = "<|im_end|>"
    pad = tok.special_tokens["<|im_end|>"]
    batch = [CHAT, CHAT[:3]]
    options = dict(template="chatml", return_assistant_tokens_mask=True)
    each = [apply_chat_template(tok, chat, **options) for chat in batch]
    longest = len(each[0]["input_ids"])
    padded = apply_chat_template(tok, batch, padding=True, tokenizer_kwargs={"padding_side": "left"}, **options)
    short = each[1]
    gap = longest - len(short["input_ids"])
    assert padded["input_ids"][1] == [pad] * gap + short["input_ids"]
    assert padded["attention_mask"][1] == [0] * gap + [1] * len(short["input_ids"])
    assert padded["assistant_masks"][1] == [0] * gap + short["assistant_masks"]
    assert padded["input_ids"][0] == each[0]["input_ids"]
    cut = apply_chat_template(tok, batch, truncation=True, max_length=10, **options)
    assert cut["input_ids"] == [result["input_ids"][:10] for result in each]
    assert cut["assistant_masks"] == [result["assistant_masks"][:10] for result in each]
    tensors = apply_chat_template(tok, batch, padding="max_length", max_length=longest + 3, return_tensors="np")
    assert tensors["input_ids"].shape == (2, longest + 3)
    with pytest.raises(ChatTemplateError, match="tokenizer_kwargs 'add_special_tokens' is not taken"):
        apply_chat_template(tok, CHAT, template="chatml", tokenizer_kwargs={"add_special_tokens": True})


def test_reasoning_is_given_under_each_name_templates_read(tok):
    template = "{% for m in messages %}{{ m['reasoning_content'] }}|{{ m['thinking'] }}|{{ m['content'] }}{% endfor %}"
    messages = [{"role": "assistant", "reasoning": "think", "content": "answer"}]
    assert apply_chat_template(tok, messages, template=template, tokenize=False) == "think|think|answer"


def test_an_empty_conversation_is_refused(tok):
    with pytest.raises(ChatTemplateError, match="messages is empty"):
        apply_chat_template(tok, [], template="chatml")


def test_tokenizer_settings_feed_the_template(tok):
    tok = bytepair.Tokenizer(tok.model, pattern=tok.pattern, special_tokens=tok.special_tokens)
    tok.bos_token = "<|begin_of_text|>"
    tok.chat_template = "{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}"
    ids = tok.apply_chat_template([{"role": "user", "content": "Hello"}], return_dict=False)
    assert ids[0] == tok.special_tokens["<|begin_of_text|>"]
    assert tok.decode(ids) == "<|begin_of_text|>Hello"


@pytest.mark.parametrize("name", ["llama3", "chatml"])
def test_encode_conversations_labels_only_assistant_tokens(tok, name):
    batch = encode_conversations(tok, [CHAT, CHAT[:3]], template=name)
    assert set(batch) == {"input_ids", "attention_mask", "labels"}
    for ids, labels in zip(batch["input_ids"], batch["labels"]):
        assert len(ids) == len(labels)
        kept = [label for label in labels if label != -100]
        assert all(label == token for label, token in zip(labels, ids) if label != -100)
        assert tok.decode(kept).startswith(expected_assistant_text(name, CHAT[2]))


@pytest.mark.parametrize("name", ["llama3", "chatml"])
def test_truncation_ends_at_a_whole_assistant_turn(tok, name):
    full = encode_conversations(tok, [CHAT], template=name)
    labels = full["labels"][0]
    first_end = (
        min(i for i, label in enumerate(labels[: len(labels) - 1]) if label != -100 and labels[i + 1] == -100) + 1
    )
    for max_length in (first_end, first_end + 1, len(labels) - 1):
        cut = encode_conversations(tok, [CHAT], template=name, max_length=max_length)
        ids, cut_labels = cut["input_ids"][0], cut["labels"][0]
        assert len(ids) <= max_length
        assert ids == full["input_ids"][0][: len(ids)]
        # It ends on the end-of-turn token of the last assistant turn kept: no half turn.
        assert ids[-1] == tok.special_tokens[END_OF_TURN[name]] and cut_labels[-1] == ids[-1]
    with pytest.raises(ChatTemplateError, match="conversation 0: its first assistant turn ends at token"):
        encode_conversations(tok, [CHAT], template=name, max_length=3)


@pytest.mark.parametrize("name", ["llama3", "chatml"])
def test_conversations_too_long_to_keep_a_turn_can_be_left_out(tok, name):
    short = CHAT[:3]
    long_first_turn = [CHAT[0], {"role": "user", "content": "word " * 200}, CHAT[2]]
    max_length = len(encode_conversations(tok, [short], template=name)["input_ids"][0]) + 5
    kept = encode_conversations(
        tok, [short, long_first_turn, CHAT], template=name, max_length=max_length, skip_overlong=True
    )
    expected = encode_conversations(tok, [short, CHAT], template=name, max_length=max_length)
    assert kept == expected
    assert len(kept["input_ids"]) == 2


def test_a_conversation_without_assistant_tokens_is_refused(tok):
    with pytest.raises(ChatTemplateError, match="conversation 0 has no assistant tokens"):
        encode_conversations(tok, [CHAT[:2]], template="chatml")


def test_bytepair_chat_is_reachable_after_a_plain_import():
    code = "import bytepair; print(bytepair.chat.render_chat([{'role': 'user', 'content': 'x'}], 'chatml'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=package_env(), timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "<|im_start|>user\nx<|im_end|>\n\n"


TOOL_CALL_CHAT = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "weather", "arguments": {}}}]},
    {"role": "tool", "content": "21"},
    {"role": "assistant", "content": "It is 21."},
]


def test_encode_conversations_errors_name_the_conversation(tok):
    # The third conversation has a tool-call turn, which a built-in template cannot render.
    with pytest.raises(ChatTemplateError, match=r"^conversation 2: message 1 has content None.*custom template"):
        encode_conversations(tok, [CHAT, CHAT[:3], TOOL_CALL_CHAT], template="chatml")
    with pytest.raises(ChatTemplateError, match="conversation 1 is a list of conversations"):
        encode_conversations(tok, [CHAT, [CHAT, CHAT]], template="chatml")


def test_a_dataset_row_or_a_long_bad_message_gets_a_short_error(tok):
    row = {"messages": CHAT}
    with pytest.raises(ChatTemplateError, match=r"pass row\['messages'\]"):
        apply_chat_template(tok, row, template="chatml", return_dict=False)
    long_text = "word " * 10_000
    with pytest.raises(ChatTemplateError, match="has no 'role'") as error:
        apply_chat_template(tok, [{"content": long_text}], template="chatml", return_dict=False)
    assert len(str(error.value)) < 400


@pytest.mark.parametrize("name", ["llama3", "chatml"])
def test_a_list_of_conversations_gives_one_result_per_conversation(tok, name):
    batch = [CHAT, CHAT[:3]]
    options = dict(template=name, return_dict=True, return_assistant_tokens_mask=True)
    each = [apply_chat_template(tok, chat, **options) for chat in batch]
    together = apply_chat_template(tok, batch, **options)
    assert together == {key: [result[key] for result in each] for key in each[0]}
    assert apply_chat_template(tok, batch, template=name, return_dict=False) == [result["input_ids"] for result in each]
    assert apply_chat_template(tok, batch, template=name, tokenize=False) == [render_chat(c, name) for c in batch]
    same_length = apply_chat_template(tok, [CHAT, CHAT], template=name, return_tensors="np", return_dict=False)
    assert same_length.shape == (2, len(each[0]["input_ids"]))
    with pytest.raises(ChatTemplateError, match="needs conversations of one length.*padding=True"):
        apply_chat_template(tok, batch, template=name, return_tensors="np", return_dict=False)
    with pytest.raises(ChatTemplateError, match="^conversation 1: message 1 has content None"):
        apply_chat_template(tok, [CHAT, TOOL_CALL_CHAT], template=name, return_dict=False)
