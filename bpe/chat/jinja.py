"""Jinja chat templates, rendered as transformers renders them, with the caller's text tracked.

The environment is transformers': sandboxed (immutable), ``trim_blocks``, ``lstrip_blocks``,
the ``loopcontrols`` extension, ``raise_exception``, ``strftime_now``, a ``tojson`` filter
that keeps non-ASCII characters and takes ``indent``/``separators``/``sort_keys``, and
``{% generation %}`` blocks.  On top of it the text that came from the caller (messages,
tools, documents, keyword data, all made :class:`~bpe.chat.tracked.Tracked` content before
rendering) stays marked through the render:

* the template's output and every captured block are joined by ``tracked.concat``, and
  ``~`` compiles to it too;
* the string methods templates call keep exact spans (``bpe.chat.tracked``); any other
  filter or call whose arguments hold content and whose result is a new string marks that
  whole result as content (the safe side);
* a ``{% generation %}`` block marks its output as the assistant's.

``jinja2`` is an optional extra; without it :func:`compile_template` raises a
``ChatTemplateError`` that says what to install.  This module does not encode.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime

from ..errors import ChatTemplateError
from . import tracked


def _derived(result, sources):
    """``result`` of a filter or call on ``sources``: a new plain string made from content
    becomes content (lists and tuples of them too)."""
    if isinstance(result, tracked.Tracked) or not any(tracked.has_content(s) for s in sources):
        return result
    if isinstance(result, str):
        return tracked.data(result)
    if isinstance(result, list):
        return [_derived(r, sources) for r in result]
    if isinstance(result, tuple):
        return tuple(_derived(r, sources) for r in result)
    return result


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _strftime_now(format):
    return datetime.now().strftime(format)


@functools.lru_cache(maxsize=None)
def _environment():
    try:
        import jinja2
        import jinja2.ext
        import jinja2.nodes
        from jinja2.compiler import CodeGenerator
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ImportError:
        raise ChatTemplateError(
            "this chat template is Jinja, and rendering it needs jinja2, an optional extra: "
            "pip install 'cybpe[chat]' (or pip install jinja2); the built-in templates ('llama3', "
            "'chatml', ...) need nothing") from None

    version = tuple(int(p) if p.isdigit() else 0 for p in jinja2.__version__.split(".")[:3])
    if version < (3, 1, 6):  # templates are untrusted code, and older sandboxes can be escaped
        raise ChatTemplateError(f"Jinja chat templates need jinja2 >= 3.1.6 (older versions have known sandbox "
                                f"escapes), and {jinja2.__version__} is installed: pip install -U jinja2")

    class Generator(CodeGenerator):
        def visit_Concat(self, node, frame):  # `a ~ b`: joined with the spans kept
            self.write("environment.concat((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write("))")

    class Generation(jinja2.ext.Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_assistant"), [], [], body).set_lineno(lineno)

        def _assistant(self, caller):
            return tracked.mark_assistant(caller())

    class Environment(ImmutableSandboxedEnvironment):
        code_generator_class = Generator
        concat = staticmethod(tracked.concat)

        def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (jinja's signature)
            result = super().call(__context, __obj, *args, **kwargs)
            return _derived(result, (getattr(__obj, "__self__", None), args, kwargs))

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    env = Environment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    for name, f in list(env.filters.items()):
        env.filters[name] = _tracking_filter(f)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = _strftime_now
    return env, jinja2


def _tracking_filter(f):
    @functools.wraps(f)  # (keeps jinja's pass_context / pass_environment marks)
    def run(*args, **kwargs):
        return _derived(f(*args, **kwargs), (args, kwargs))
    return run


@functools.lru_cache(maxsize=64)
def compile_template(source: str):
    """The compiled template of ``source`` (cached); a syntax error raises
    ``ChatTemplateError`` with its line."""
    env, jinja2 = _environment()
    try:
        return env.from_string(source)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise ChatTemplateError(f"the chat template does not parse: line {exc.lineno}: {exc.message}") from None


def render(source: str, variables: dict) -> str:
    """``source`` rendered with ``variables`` (the caller's data already tracked): a string
    whose spans say which text came from the data and which is the assistant's."""
    template = compile_template(source)
    _, jinja2 = _environment()
    try:
        return template.render(**variables)
    except jinja2.exceptions.TemplateError as exc:
        raise ChatTemplateError(f"the chat template raised: {exc}") from None
