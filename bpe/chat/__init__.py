"""Chat templates: a conversation rendered as the model was trained to see it, then encoded
so that nothing the messages say can become the template's special tokens.

``Tokenizer.apply_chat_template`` lands here.  The template is a built-in one
(``bpe.chat.builtin``: ``llama3``, ``llama3.1``, ``chatml``, ``qwen2.5``, ``mistral``,
``gemma``; no dependency), the ``chat_template`` of the tokenizer's
``tokenizer_config.json`` (one, or a named one from its list: ``template="tool_use"``), or
Jinja source given as ``template=``; Jinja renders as in transformers (``bpe.chat.jinja``,
optional ``jinja2``).  The rendered string (``tokenize=False``) is byte for byte what
transformers renders.

No injection, by construction: every string the caller passes (message contents, names,
tool calls and their arguments, tools, documents, other keyword data) is made
:class:`~bpe.chat.tracked.Tracked` content before rendering, and the render keeps track of
which characters came from it.  Encoding then finds the added tokens (special or not) only
in the template's own text; the content is encoded as ordinary text, as ``encode_ordinary``
would, so ``<|im_end|><|im_start|>system`` inside a message stays text.  (transformers
renders to a string and tokenizes it whole, so there the same text becomes structure.)
``allow_special_in_content=True`` turns this off for trusted content.  ``tokenize=False``
returns the plain string: from there, keeping content apart is the caller's job.

Assistant masks come from ``{% generation %}`` blocks in Jinja templates and from the
assistant turns of the built-in ones: a token is the assistant's when its characters
overlap such text.  This package does not define the BPE pipeline; it uses the tokenizer's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Optional

from .. import special
from ..errors import ChatTemplateError
from . import builtin, jinja, tracked

#: what ``continue_final_message`` appends to the final message to find where it ends
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
_HIDDEN = "\uffff"  # stands for content in the text where added tokens are looked for
_GENERATION = re.compile(r"\{%-?\s*generation\s*-?%\}")


def apply_chat_template(tok, conversation, *, template: Optional[str], add_generation_prompt: bool,
                        tokenize: bool, return_dict: bool, return_assistant_tokens_mask: bool, tools, documents,
                        continue_final_message, allow_special_in_content: bool, kwargs: dict):
    """See ``Tokenizer.apply_chat_template``.  A list of conversations gives a list."""
    if not isinstance(conversation, (list, tuple)):
        raise ChatTemplateError(f"pass the conversation as a list of messages (dicts with 'role' and "
                                f"'content'), got {type(conversation).__name__}")
    if conversation and isinstance(conversation[0], (list, tuple)):
        return [apply_chat_template(
            tok, c, template=template, add_generation_prompt=add_generation_prompt, tokenize=tokenize,
            return_dict=return_dict, return_assistant_tokens_mask=return_assistant_tokens_mask, tools=tools,
            documents=documents, continue_final_message=continue_final_message,
            allow_special_in_content=allow_special_in_content, kwargs=kwargs) for c in conversation]
    if add_generation_prompt and continue_final_message:
        raise ChatTemplateError("add_generation_prompt=True starts a new assistant turn and continue_final_message="
                                "True continues the last one: pass one of them")
    if return_assistant_tokens_mask and not (tokenize and return_dict):
        raise ChatTemplateError("return_assistant_tokens_mask=True needs tokenize=True and return_dict=True")
    config = tok.hf_config or {}
    kind, source = _choose(template, config, tools)
    messages = [_checked(m, i, kind, source) for i, m in enumerate(conversation)]
    keep = (lambda v: v) if allow_special_in_content else tracked.track
    messages = keep(_with_reasoning_aliases(messages))
    field = None
    if continue_final_message:
        field, messages = _tag_final(messages, continue_final_message, kind, source)
    if kind == "builtin":
        rendered = _render_builtin(source, messages, add_generation_prompt, tools, documents, config,
                                   keep(dict(kwargs)))
    else:
        variables = {k: config[k] for k in ("bos_token", "eos_token", "unk_token", "pad_token")
                     if isinstance(config.get(k), str)}
        variables.update(keep(dict(kwargs)))
        variables.update(messages=messages, tools=keep(tools), documents=keep(documents),
                         add_generation_prompt=add_generation_prompt)
        rendered = jinja.render(source, variables)
    if field is not None:
        rendered = _cut_at_tag(rendered)
    if not tokenize:
        return str.__str__(rendered)
    content, assistant = tracked.spans(rendered)
    if return_assistant_tokens_mask and kind == "jinja" and not _GENERATION.search(source):
        raise ChatTemplateError(
            "this chat template marks no assistant text ({% generation %} blocks), so there is no assistant mask "
            "to give: use a built-in template (e.g. template='chatml') or one with generation blocks")
    if kind == "builtin":
        _check_tokens(tok, builtin.TEMPLATES[source], config)
    ids, spans = _encode(tok, str.__str__(rendered), content)
    if not return_dict:
        return ids
    out = {"input_ids": ids, "attention_mask": [1] * len(ids)}
    if return_assistant_tokens_mask:
        out["assistant_masks"] = [int(any(a < y and x < b for x, y in assistant)) for a, b in spans]
    return out


# ------------------------------------------------------------------ the template


def _choose(template, config: dict, tools) -> tuple[str, str]:
    """``("builtin", name)`` or ``("jinja", source)``."""
    named = config.get("chat_template")
    if isinstance(named, list):  # transformers' list of {"name", "template"}
        named = {t.get("name"): t.get("template") for t in named if isinstance(t, dict)}
    if template is None:
        if isinstance(named, dict):
            name = "tool_use" if tools is not None and "tool_use" in named else "default"
            if name not in named:
                raise ChatTemplateError(f"the tokenizer's chat templates are {sorted(named)}, none named 'default': "
                                        "pass template=<one of them>")
            return "jinja", named[name]
        if isinstance(named, str):
            return "jinja", named
        raise ChatTemplateError(
            "this tokenizer has no chat template (no tokenizer_config.json with a chat_template was read): pass "
            f"template= one of the built-in names {sorted(builtin.TEMPLATES)} or Jinja source")
    if not isinstance(template, str):
        raise ChatTemplateError(f"template must be a str (a built-in name, a template name or Jinja source), got "
                                f"{type(template).__name__}")
    if template in builtin.TEMPLATES:
        return "builtin", template
    if isinstance(named, dict) and template in named:
        return "jinja", named[template]
    if "{{" in template or "{%" in template:
        return "jinja", template
    known = sorted(builtin.TEMPLATES) + (sorted(named) if isinstance(named, dict) else [])
    raise ChatTemplateError(f"unknown chat template {template!r}: pass one of {known} or Jinja source")


def _checked(message, index: int, kind: str, source: str) -> dict:
    """The message as a plain dict, or an error naming its index and what to pass."""
    if not isinstance(message, Mapping):
        raise ChatTemplateError(f"message {index}: expected a dict with 'role' and 'content', got "
                                f"{type(message).__name__}")
    message = dict(message)
    role = message.get("role")
    if not isinstance(role, str):
        raise ChatTemplateError(f"message {index}: 'role' is {'missing' if role is None else type(role).__name__}; "
                                "pass a string such as 'user'")
    if "content" not in message and not message.get("tool_calls"):
        raise ChatTemplateError(f"message {index}: 'content' is missing; pass the text (or '' for none)")
    content = message.get("content")
    if kind == "builtin":
        b = builtin.TEMPLATES[source]
        if role not in b.roles:
            raise ChatTemplateError(f"message {index}: role {role!r} is not one the {source!r} template knows; "
                                    f"pass one of {list(b.roles)}")
        if message.get("tool_calls"):
            raise ChatTemplateError(f"message {index}: the built-in {source!r} template does not write tool calls; "
                                    "use the model's own Jinja template (template=...)")
        if not isinstance(content, str):
            raise ChatTemplateError(f"message {index}: 'content' must be a string for the built-in {source!r} "
                                    f"template, got {type(content).__name__}")
    elif not (content is None or isinstance(content, str) or (
            isinstance(content, list) and all(isinstance(p, Mapping) for p in content))):
        raise ChatTemplateError(f"message {index}: 'content' must be a string or a list of parts (dicts such as "
                                f"{{'type': 'text', 'text': ...}}), got {type(content).__name__}")
    return message


def _with_reasoning_aliases(messages: list) -> list:
    """transformers' aliases: a message's reasoning under any of its names is given under
    ``reasoning_content`` (and ``thinking``) too."""
    out = []
    for m in messages:
        reasoning = next((m[k] for k in _REASONING_FIELDS if m.get(k) is not None), None)
        out.append(m if reasoning is None else {"thinking": reasoning, **m, "reasoning_content": reasoning})
    return out


def _tag_final(messages: list, which, kind: str, source: str) -> tuple[str, list]:
    """The messages with transformers' tag after the text of the final message to continue."""
    if not messages:
        raise ChatTemplateError("continue_final_message=True needs at least one message")
    field = which if isinstance(which, str) else "content"
    last = dict(messages[-1])
    value = last.get(field)
    if isinstance(value, list):
        parts = [dict(p) for p in value]
        for p in reversed(parts):
            if isinstance(p.get("text"), str):
                p["text"] = p["text"] + tracked.data(_CONTINUE_TAG)
                break
        else:
            raise ChatTemplateError("continue_final_message: the final message has no text part to continue")
        last[field] = parts
    elif isinstance(value, str):
        fields = [f for f in _REASONING_FIELDS if last.get(f) == value] if field in _REASONING_FIELDS else [field]
        for f in fields:
            last[f] = last[f] + tracked.data(_CONTINUE_TAG)
    else:
        raise ChatTemplateError(f"continue_final_message: the final message has no {field!r} text to continue")
    return field, messages[:-1] + [last]


def _cut_at_tag(rendered: str) -> str:
    tag = _CONTINUE_TAG.strip()
    at = str.rfind(rendered, tag)
    if at < 0:
        raise ChatTemplateError("continue_final_message: the template dropped the final message's text, so there "
                                "is nothing to continue")
    if str.__str__(rendered[at:at + len(_CONTINUE_TAG)]) == _CONTINUE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()  # (the template trimmed the text: its end is uncertain)


def _render_builtin(name: str, messages: list, add_generation_prompt: bool, tools, documents, config: dict,
                    options: dict) -> str:
    b = builtin.TEMPLATES[name]
    if tools is not None or documents is not None:
        raise ChatTemplateError(f"the built-in {name!r} template does not write tools or documents; use the "
                                "model's own Jinja template (template=...)")
    if not messages:
        raise ChatTemplateError(f"the built-in {name!r} template needs at least one message")
    return b.render(messages, add_generation_prompt, *_bos_eos(b, config), options)


def _bos_eos(b: "builtin.Builtin", config: dict) -> tuple[str, str]:
    """A built-in's bos and eos: the tokenizer config's where it names them."""
    return tuple(config[k] if isinstance(config.get(k), str) else default
                 for k, default in (("bos_token", b.bos), ("eos_token", b.eos)))


# ------------------------------------------------------------------ encoding


def _check_tokens(tok, b: "builtin.Builtin", config: dict) -> None:
    names = {t.content for t in tok.added_tokens}
    bos, eos = _bos_eos(b, config)
    missing = [t for t in (*b.structural, bos, eos if b.writes_eos else "") if t and t not in names]
    if missing:
        raise ChatTemplateError(
            f"the {b.name!r} template writes the special tokens {missing}, which this tokenizer does not have (they "
            "would be encoded as plain text): use the template of this tokenizer's model family, or tokenize=False")


def _encode(tok, text: str, content: tuple) -> tuple[list[int], list[tuple[int, int]]]:
    """The ids of ``text`` and each token's character span: the added tokens found only
    outside ``content`` (as HF finds them), everything else as ordinary text."""
    probe = text
    if content:
        chars = list(text)
        for a, b in content:
            for i in range(a, b):
                if not chars[i].isspace():
                    chars[i] = _HIDDEN
        probe = "".join(chars)
    ids: list[int] = []
    spans: list[tuple[int, int]] = []
    for s, e, token in special.find_added(probe, {t.content: t for t in tok.added_tokens}):
        if token is not None:
            ids.append(token.id)
            spans.append((s, e))
            continue
        parts = tok._ordinary_offsets(text[s:e])
        ids += parts[0]
        spans += [(s + a, s + b) for a, b in zip(parts[1], parts[2])]
    return ids, spans
