// An authsettingsV2 document as Azure's management API hands it out (`az webapp auth show`,
// `az rest --method get …/config/authsettingsV2`, an ARM template's resource): the settings under
// `properties`, beside the resource's own metadata. Taken as is, so that such an export works
// unedited; before, every setting in it was an unknown key and the start failed with
// "no identity provider is enabled".

/** The keys of an Azure resource around its `properties`. */
const RESOURCE_KEYS: ReadonlySet<string> = new Set(['id', 'name', 'type', 'kind', 'location', 'systemData', 'tags', 'apiVersion', 'dependsOn', 'properties']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The settings of `document`: its `properties` when it is such a resource (an object of `properties`
 * and resource keys only, so a document of settings is never mistaken for one), else itself.
 */
export function authSettingsOf(document: unknown): unknown {
  if (!isObject(document) || !isObject(document.properties)) return document;
  return Object.keys(document).every((key) => RESOURCE_KEYS.has(key)) ? document.properties : document;
}
