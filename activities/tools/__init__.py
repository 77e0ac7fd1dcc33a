"""Built-in tools the model can call, each confined to one workspace directory."""

from __future__ import annotations

from .base import BuiltinTool, ToolArgs, ToolContext, ToolFailure
from .files import (
    EditFileArgs,
    EditFileTool,
    ListDirectoryArgs,
    ListDirectoryTool,
    ReadFileArgs,
    ReadFileTool,
    WriteFileArgs,
    WriteFileTool,
)
from .search import GlobArgs, GlobTool, GrepSearchArgs, GrepSearchTool
from .shell import RunShellCommandArgs, RunShellCommandTool
from .workspace import resolve_in_workspace

BUILTIN_TOOLS: dict[str, BuiltinTool] = {
    tool.name: tool
    for tool in (
        ReadFileTool(),
        WriteFileTool(),
        EditFileTool(),
        ListDirectoryTool(),
        GlobTool(),
        GrepSearchTool(),
        RunShellCommandTool(),
    )
}

__all__ = [
    "BUILTIN_TOOLS",
    "BuiltinTool",
    "EditFileArgs",
    "EditFileTool",
    "GlobArgs",
    "GlobTool",
    "GrepSearchArgs",
    "GrepSearchTool",
    "ListDirectoryArgs",
    "ListDirectoryTool",
    "ReadFileArgs",
    "ReadFileTool",
    "RunShellCommandArgs",
    "RunShellCommandTool",
    "ToolArgs",
    "ToolContext",
    "ToolFailure",
    "WriteFileArgs",
    "WriteFileTool",
    "resolve_in_workspace",
]
