// *** The utilities module of the SDK pulumi's nodejs codegen generates (pkg/codegen/nodejs/utilities.ts
// of pulumi/pulumi, commit 1b5949891b3cefcb9974752b24a5ecef0acc86c8), reduced to what the resource uses. ***

import * as pulumi from "@pulumi/pulumi";

export function getVersion(): string {
    let version = require("./package.json").version;
    // Node allows for the version to be prefixed by a "v", while semver doesn't.
    // If there is a v, strip it off.
    if (version.indexOf("v") === 0) {
        version = version.slice(1);
    }
    return version;
}

/** @internal */
export function resourceOptsDefaults(): pulumi.ComponentResourceOptions {
    return { version: getVersion() };
}
