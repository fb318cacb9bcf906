"""The pushguard plugin: serves ``PushSubscription`` to Pulumi programs in any language.

Pulumi's Python language host starts this folder as a provider plugin: the virtualenv's
``python <this folder> <engine address> [flags]``, with the consumer's project directory as the
working directory. :func:`pushguard.components.schema.serve` runs Pulumi's component provider for
the component, as :func:`~pulumi.provider.experimental.component_provider_host` does: it infers the
package schema (package ``pushguard``, resource ``pushguard:index:PushSubscription``) from the
component's type annotations, at the installed pushguard version, with descriptions rewritten as
Markdown in the schema's camelCase names; serves the provider gRPC protocol on 127.0.0.1 and
prints its port as the first line of stdout (nothing may be printed before it). Each
``Construct`` runs the Python component, which validates its inputs before it registers any
resource.

See https://www.pulumi.com/docs/iac/guides/building-extending/packages/source-based-plugin/ and
https://www.pulumi.com/docs/iac/guides/building-extending/components/build-a-component/.
"""

import sys

from pushguard.components.schema import serve

if __name__ == "__main__":
    serve(sys.argv[1:])
