"""What the model reads of audio, resource links and embedded resources in a tool result."""

from __future__ import annotations

from acp_sidecar.agent.model.messages import result_text
from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    EmbeddedResourceContent,
    ResourceLinkContent,
    TextContent,
    TextResource,
)
from acp_sidecar.tools.result import ToolExecutionResult


def test_each_kind_reads_as_text_the_way_a_prompt_does() -> None:
    result = ToolExecutionResult(
        call_id="c1",
        content=(
            TextContent("found: "),
            ResourceLinkContent("file:///w/a.py", "a.py", title="A"),
            ResourceLinkContent("file:///w/b.py", "b.py"),
            AudioContent("UklG", "audio/wav"),
            EmbeddedResourceContent(TextResource("file:///w/c.txt", "c = 3")),
            EmbeddedResourceContent(BlobResource("mem://d", "AA", "application/zip")),
            EmbeddedResourceContent(BlobResource("mem://e", "AA")),
        ),
        is_error=False,
    )
    assert result_text(result) == (
        "found: [@A](file:///w/a.py)[@b.py](file:///w/b.py)[audio/wav audio not shown]"
        '\n<context uri="file:///w/c.txt">\nc = 3\n</context>\n'
        "\n[mem://d: application/zip content, not included]\n"
        "\n[mem://e: binary content, not included]\n"
    )
