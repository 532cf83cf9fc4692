"""The v2 diff encoder, pure: the patch it writes, applied to the old text, gives the new text
(hypothesis, lines with and without a final newline), and a new file is an ``add`` from
``/dev/null``; every diff is valid v2 card content."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.bridge.v2.diffs import diff_of
from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.tool_call import ToolCallDiff
from tests.acp_schema import validate_instance
from tests.conformance.v2.patches import apply_patch

lines = st.lists(st.sampled_from(["a", "b", "c", "", " x", "-y", "+z"]), max_size=8)


def text_of(parts: list[str], newline: bool) -> str:
    return "\n".join(parts) + ("\n" if newline and parts else "")


@given(old=lines, new=lines, old_nl=st.booleans(), new_nl=st.booleans())
def test_the_patch_turns_the_old_text_into_the_new(
    old: list[str], new: list[str], old_nl: bool, new_nl: bool
) -> None:
    before, after = text_of(old, old_nl), text_of(new, new_nl)
    diff = diff_of(ToolCallDiff(path="/w/f.txt", old_text=before, new_text=after))
    assert diff.changes[0].operation == "modify"
    assert diff.patch is not None
    assert apply_patch(before, diff.patch.text) == after
    validate_instance(to_wire(diff), "ToolCallContent", version=2)


@given(new=lines, new_nl=st.booleans())
def test_a_new_file_is_an_add_from_dev_null(new: list[str], new_nl: bool) -> None:
    after = text_of(new, new_nl)
    diff = diff_of(ToolCallDiff(path="/w/new.txt", old_text=None, new_text=after))
    assert diff.changes[0].operation == "add" and diff.changes[0].path == "/w/new.txt"
    assert diff.patch is not None
    text = diff.patch.text
    assert text.startswith("diff --git /w/new.txt /w/new.txt\nnew file mode 100644\n")
    if after:
        assert "--- /dev/null\n+++ /w/new.txt\n" in text
    assert apply_patch(None, text) == after
