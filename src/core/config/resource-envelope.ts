// An authsettingsV2 document as Azure's management API hands it out (`az webapp auth show`,
// `az rest --method get …/config/authsettingsV2`, an ARM template's resource): the settings under
// `properties`, beside the resource's own metadata. Taken as is, so that such an export works
// unedited; before, every setting in it was an unknown key and the start failed with
// "no identity provider is enabled".
import { isJsonObject } from './json-object.js';

/** The keys of an Azure resource around its `properties`. */
const RESOURCE_KEYS: ReadonlySet<string> = new Set([
  'id',
  'name',
  'type',
  'kind',
  'location',
  'systemData',
  'tags',
  'apiVersion',
  'dependsOn',
  'properties',
]);

/**
 * The settings of `document`: its `properties` when it is such a resource (an object of `properties`
 * and resource keys only, so a document of settings is never mistaken for one), else itself.
 */
export function authSettingsOf(document: unknown): unknown {
  if (!isJsonObject(document) || !isJsonObject(document.properties)) return document;
  return Object.keys(document).every((key) => RESOURCE_KEYS.has(key)) ? document.properties : document;
}
