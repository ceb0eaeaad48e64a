"""Command-line options shared by several commands (chunking knobs, input decoding)."""

from __future__ import annotations

import argparse

from hichunk.document.load import FORMATS


def add_input_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("input")
    group.add_argument("--input-format", default="auto", choices=["auto", *FORMATS],
                       help="how to read the files (default: from the extension; unknown extensions are plain text)")
    group.add_argument("--encoding", default="utf-8", help="text encoding of the files (default: utf-8)")
    group.add_argument("--encoding-errors", default="strict", choices=["strict", "replace", "ignore"],
                       help="what to do with undecodable bytes (default: strict, i.e. refuse the file)")


def add_chunk_options(parser: argparse.ArgumentParser, title: str = "chunking", models: bool = False) -> None:
    """The chunking knobs; ``models`` adds the options that choose the split-point model (``hichunk chunk``),
    and the help then names them (an index always chunks with the shipped model)."""
    from hichunk.chunkers import DEFAULT_METHOD, METHODS, ChunkOptions

    group = parser.add_argument_group(title)
    which = "the shipped offline one unless --model/--endpoint is given" if models else "the shipped offline one"
    group.add_argument("--method", default=DEFAULT_METHOD, choices=list(METHODS),
                       help=f"chunking method (default: {DEFAULT_METHOD}; hichunk = the split-point model, {which})")
    group.add_argument("--hints", default="use", choices=["use", "ignore"],
                       help="use: trust explicit headings (Markdown/HTML/reST/DOCX, PDF bookmarks); ignore: infer structure from content")
    group.add_argument("--leaf-tokens", type=_leaf_size, default=200, metavar="N",
                       help="leaf size in tokens (HC200 leaves; chunk size of fixed/recursive/cdc) (default: 200)")
    group.add_argument("--max-level", type=_level, default=10, metavar="K",
                       help="fold split points deeper than level K into the chunk before them (default: 10)")
    group.add_argument("--merge-over-chunk", action=argparse.BooleanOptionalAction,
                       default=ChunkOptions.merge_over_chunk,
                       help="merge a chunk with the deeper chunks after it when together they fit in one leaf, as the "
                       "reference does before indexing (default: on; --no-merge-over-chunk keeps every predicted "
                       "split point, e.g. to score them)")
    windows = ", and for windows with --endpoint" if models else ""
    group.add_argument("--tokenizer", default=None, metavar="NAME",
                       help=f"tokenizer for sizes{windows}: a Hugging Face directory or hub id, or "
                       "tiktoken:ENCODING (default: offline XLM-R via blingfire)")
    if models:
        _add_model_options(parser)


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    """Options of the model-based method ``hichunk`` (split points predicted by a model)."""
    group = parser.add_argument_group("model (method hichunk; --model or --endpoint selects it)")
    group.add_argument("--model", metavar="NAME",
                       help="split-point model: a registered name (encoder: the shipped offline model, the default "
                       "of --method hichunk; hichunk-gen: the shipped fine-tuned SmolLM2 adapter), a LoRA adapter "
                       "folder from hichunk sft train, or a Hugging Face causal LM directory or hub id")
    group.add_argument("--endpoint", metavar="URL",
                       help="an OpenAI-compatible completions server (e.g. vLLM at http://127.0.0.1:8000) serving the model; "
                       "windows are measured with --tokenizer (default: the offline tokenizer)")
    group.add_argument("--model-name", metavar="NAME", help="the served model's name (with --endpoint)")
    group.add_argument("--retries", type=int, default=3, metavar="N",
                       help="with --endpoint: retry a failed request N times, pausing 1, 2, 4 ... s (default: 3)")
    group.add_argument("--window", type=_positive, metavar="L",
                       help="window size in model tokens (default: the model's own, 16384 for generative models)")
    group.add_argument("--prompt-file", metavar="FILE",
                       help="instruction for generative models, read byte for byte (e.g. the one a released model was trained with)")
    group.add_argument("--levels", choices=["document", "window"], default="document",
                       help="document: one level per heading style over the whole document (numbering, underline, "
                       "font); window: keep each window's own levels (default: document)")
    group.add_argument("--recurrent", type=int, choices=[1, 2], default=2,
                       help="2: carry residual lines from the current level-1 segment into the next window; 1: never (default: 2)")
    group.add_argument("--max-new-tokens", type=_positive, metavar="N",
                       help="answer length limit of generative models (default: the model's own; 4096 when it has none)")
    group.add_argument("--strict-empty", action="store_true",
                       help="treat an empty answer as a parse error, as the reference code does (default: no chunk starts)")
    group.add_argument("--no-chat-template", action="store_true", help="send the window text without a chat template")
    group.add_argument("--device", default="auto", help="where a local model runs: auto, cpu, cuda, cuda:1 ... (default: auto)")
    group.add_argument("--dtype", default="auto", choices=["auto", "bf16", "fp16", "fp32"],
                       help="weights of a local model (default: bf16 on GPUs that have it, else fp16 on GPU; on CPU fp32, "
                       "or bf16 for a LoRA adapter when the CPU computes bf16 natively)")
    group.add_argument("--trace", metavar="FILE",
                       help="write one JSON line per window: input size, answer, status, time, cache hit or miss")
    group.add_argument("--no-cache", action="store_true",
                       help="do not read or write the prediction cache (default: $XDG_CACHE_HOME/hichunk/predictions)")


def model_from(args: argparse.Namespace):
    """The split-point model the options name (None: the registered default)."""
    from hichunk.errors import HichunkError
    from hichunk.models.prompt import load_instruction
    from hichunk.models.registry import ModelSettings, load_endpoint, load_model

    settings = ModelSettings(window_tokens=args.window, max_new_tokens=args.max_new_tokens,
                             instruction=load_instruction(args.prompt_file) if args.prompt_file else None,
                             strict_empty=args.strict_empty, chat_template=not args.no_chat_template,
                             device=args.device, dtype=args.dtype)
    if args.endpoint:
        if args.model:
            raise HichunkError("give --model or --endpoint, not both")
        if not args.model_name:
            raise HichunkError("--endpoint needs --model-name (the name the server serves the model under)")
        from hichunk.tokens import load_tokenizer

        hf_tokenizer = args.tokenizer if args.tokenizer and not args.tokenizer.startswith(("blingfire:", "tiktoken:")) else None
        return load_endpoint(args.endpoint, args.model_name, load_tokenizer(args.tokenizer), settings, hf_tokenizer,
                             args.retries)
    if args.model_name:
        raise HichunkError("--model-name only applies with --endpoint")
    return load_model(args.model, settings)


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("must be a positive number")
    return n


def _leaf_size(value: str) -> int:
    from hichunk.chunkers.base import MIN_LEAF_TOKENS

    n = int(value)
    if n < MIN_LEAF_TOKENS:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_LEAF_TOKENS}")
    return n


def _level(value: str) -> int:
    n = int(value)
    if not 1 <= n <= 10:
        raise argparse.ArgumentTypeError("must be between 1 and 10")
    return n


def chunk_options_from(args: argparse.Namespace):
    """ChunkOptions from parsed arguments."""
    from hichunk.chunkers import ChunkOptions
    from hichunk.tokens import load_tokenizer

    return ChunkOptions(leaf_tokens=args.leaf_tokens, max_level=args.max_level, hints=args.hints,
                        merge_over_chunk=args.merge_over_chunk, tokenizer=load_tokenizer(args.tokenizer))


def input_paths(paths: list[str], args: argparse.Namespace) -> list[str]:
    """The files the paths name (directories walked); before any work, a format needing an extra is checked."""
    from hichunk.document import detect_format
    from hichunk.document.inputs import collect_inputs
    from hichunk.extras import require_extra

    found = collect_inputs(paths)
    fixed = None if args.input_format == "auto" else args.input_format
    if any((fixed or detect_format(p)) == "docx" for p in found if p != "-"):
        require_extra("docx", what="reading .docx files")
    return found


def load_input(path: str, args: argparse.Namespace):
    """Load one document as the input options say ('-' reads standard input as text)."""
    from hichunk.document import load_document, parse_bytes

    fmt = None if args.input_format == "auto" else args.input_format
    if path == "-":
        import sys

        return parse_bytes(sys.stdin.buffer.read(), fmt or "text", "<stdin>", args.encoding, args.encoding_errors)
    return load_document(path, fmt, args.encoding, args.encoding_errors)
