"""``pushguard preview`` as an engine: Pulumi's own protocols, the program in its own runtime.

Instead of running the team's program under the SDK's mock runtime inside pushguard's
environment, this package does what the Pulumi CLI does for ``pulumi preview``: it serves the
``ResourceMonitor`` and ``Engine`` gRPC services (the protobufs shipped in the SDK,
``pulumi.runtime.proto``) on loopback and starts the program the way the Python language host
does, with the interpreter of the project's own environment, or, for ``runtime: nodejs``
(TypeScript, JavaScript), the way the Node.js language host does: ``node`` with the run entry
of the project's own ``@pulumi/pulumi``. The program talks to pushguard only
over the protocol; what the engine records lives in pushguard's process alone, so nothing the
program does in its own process (wrapping the SDK's monitor stub, ``logging.disable``) changes
what is judged.

Modules, one job each:

- :mod:`pushguard.engine.runtime`: which interpreter and environment run the program
  (``Pulumi.yaml``'s ``runtime.options``: ``virtualenv``, ``toolchain``), as the language host
  picks them;
- :mod:`pushguard.engine.bootstrap`: the script the program's interpreter runs (the language
  host's ``pulumi-language-python-exec``, with pushguard's failure report), public SDK API only;
- :mod:`pushguard.engine.nodejs`: ``node``, the project's ``@pulumi/pulumi`` run entry, its
  arguments and environment, as the Node.js language host builds them;
- :mod:`pushguard.engine.node_failure`: how a Node.js program ended (the run entry's report of
  an unhandled error, ``process.exit``), as a failure of the same shape as Python's;
- :mod:`pushguard.engine.planner`: the dry-run answers (planned outputs, invokes) from the
  offline provider knowledge of :mod:`pushguard.preview.mocks`, a function's outputs from its
  own definition in the installed SDK (:mod:`pushguard.preview.functions`);
- :mod:`pushguard.engine.recorder`: the record of a run (registrations, logs, outputs, the
  program's failure), thread-safe;
- :mod:`pushguard.engine.monitor`: the ``ResourceMonitor`` service;
- :mod:`pushguard.engine.construct`: pushguard's own remote component, constructed by its
  provider as the engine has the plugin construct it;
- :mod:`pushguard.engine.host`: the ``Engine`` service (``Log``, ``GetRootResource``,
  ``SetRootResource``);
- :mod:`pushguard.engine.launcher`: the server, the program's process, and how it ended.

Sources (pulumi/pulumi at commit 1b5949891b3cefcb9974752b24a5ecef0acc86c8):
``sdk/python/cmd/pulumi-language-python/main.go`` (``Run``, ``constructArguments``,
``constructConfig``, ``parseOptions``), ``sdk/python/cmd/pulumi-language-python-exec``,
``sdk/python/toolchain/{toolchain,pip,uv,poetry}.go``,
``sdk/nodejs/cmd/pulumi-language-nodejs/main.go``, ``sdk/nodejs/cmd/run/{index,run}.ts``,
``pkg/resource/deploy/source_eval.go``
(``resmon``), ``pkg/resource/deploy/deployment.go`` (``generateURN``),
``pkg/host/host_server.go`` (the ``Engine`` service).
"""
