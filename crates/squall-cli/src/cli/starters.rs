//! The adapters `squall init` writes: each of `adapters/` (compiled in) that runs its client as
//! shipped, with the files that pin the client's version and the command that judges it.

/// How the client an adapter drives is installed.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Runtime {
    /// `pip install -r requirements.txt`, then `python3 adapter.py`.
    Python,
    /// `npm ci` beside `package.json`, then `node adapter.mjs`.
    Node,
}

/// One adapter `squall init` can write.
#[derive(Debug)]
pub(crate) struct Starter {
    /// Its name (`python-openai`), as in `adapters/`.
    pub name: &'static str,
    /// The client it drives, for people.
    pub client: &'static str,
    pub runtime: Runtime,
    /// Arguments after the adapter's file in its command (`standard` for boto3's retry mode).
    pub args: &'static str,
    /// (file name, contents) to write.
    pub files: &'static [(&'static str, &'static str)],
}

impl Starter {
    /// The file the command runs.
    pub(super) fn entry(&self) -> &'static str {
        self.files[0].0
    }
}

macro_rules! adapter_file {
    ($dir:literal, $file:literal) => {
        ($file, include_str!(concat!("../../adapters/", $dir, "/", $file)))
    };
}

macro_rules! node_files {
    ($dir:literal) => {
        &[
            adapter_file!($dir, "adapter.mjs"),
            adapter_file!($dir, "package.json"),
            adapter_file!($dir, "package-lock.json"),
        ]
    };
}

/// Every adapter `squall init` offers, by name.
pub(crate) const STARTERS: &[Starter] = &[
    Starter {
        name: "python-openai",
        client: "the official openai Python SDK (Responses API, streamed)",
        runtime: Runtime::Python,
        args: "",
        files: &[adapter_file!("python-openai", "adapter.py"), ("requirements.txt", "openai==3.51.0\n")],
    },
    Starter {
        name: "python-anthropic",
        client: "the official anthropic Python SDK (Messages API, streamed)",
        runtime: Runtime::Python,
        args: "",
        files: &[adapter_file!("python-anthropic", "adapter.py"), ("requirements.txt", "anthropic==2.10.0\n")],
    },
    Starter {
        name: "python-google-genai",
        client: "Google's google-genai Python SDK (Gemini API, streamed)",
        runtime: Runtime::Python,
        args: "",
        files: &[adapter_file!("python-google-genai", "adapter.py"), ("requirements.txt", "google-genai==3.3.0\n")],
    },
    Starter {
        name: "python-boto3-bedrock",
        client: "AWS's boto3 bedrock-runtime client (ConverseStream, standard retries)",
        runtime: Runtime::Python,
        args: " standard",
        files: &[adapter_file!("python-boto3-bedrock", "adapter.py"), ("requirements.txt", "boto3==1.44.8\n")],
    },
    Starter {
        name: "python-ollama",
        client: "the official ollama Python client (chat, streamed)",
        runtime: Runtime::Python,
        args: "",
        files: &[adapter_file!("python-ollama", "adapter.py"), ("requirements.txt", "ollama==0.6.3\n")],
    },
    Starter {
        name: "python-litellm",
        client: "litellm (completion, streamed, on the Chat Completions API)",
        runtime: Runtime::Python,
        args: "",
        files: &[adapter_file!("python-litellm", "adapter.py"), ("requirements.txt", "litellm==1.110.2\n")],
    },
    Starter {
        name: "node-openai",
        client: "the official openai npm package (Responses API, streamed)",
        runtime: Runtime::Node,
        args: "",
        files: node_files!("node-openai"),
    },
    Starter {
        name: "node-anthropic",
        client: "the official @anthropic-ai/sdk npm package (Messages API, streamed)",
        runtime: Runtime::Node,
        args: "",
        files: node_files!("node-anthropic"),
    },
    Starter {
        name: "node-ai-sdk",
        client: "the Vercel AI SDK (streamText with @ai-sdk/openai)",
        runtime: Runtime::Node,
        args: "",
        files: node_files!("node-ai-sdk"),
    },
    Starter {
        name: "node-langchain",
        client: "LangChain JS (ChatOpenAI.stream)",
        runtime: Runtime::Node,
        args: "",
        files: node_files!("node-langchain"),
    },
    Starter {
        name: "node-aws-bedrock",
        client: "the AWS SDK for JavaScript v3's Bedrock Runtime client (ConverseStreamCommand)",
        runtime: Runtime::Node,
        args: "",
        files: node_files!("node-aws-bedrock"),
    },
];
