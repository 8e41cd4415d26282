/**
 * Shopify's Admin API runs graphql-ruby, so its validation errors read differently from graphql-js's:
 *   {"message":"Field 'foo' doesn't exist on type 'Order'","locations":[{"line":1,"column":30}],
 *    "path":["query","order","foo"],"extensions":{"code":"undefinedField","typeName":"Order","fieldName":"foo"}}
 * The common graphql-js messages are rewritten into that form; anything else keeps graphql-js's message
 * with the code GRAPHQL_VALIDATION_FAILED.
 */
import { BREAK, Kind, visit, type ASTNode, type DocumentNode, type GraphQLError } from 'graphql';

export interface ShopifyGraphqlError {
  message: string;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions?: Record<string, unknown>;
}

interface Rewrite {
  pattern: RegExp;
  rewrite(match: RegExpExecArray, operationName: string): { message: string; extensions: Record<string, unknown> };
}

const REWRITES: Rewrite[] = [
  {
    pattern: /^Cannot query field "(\w+)" on type "(\w+)"\./,
    rewrite: ([, field, type]) => ({
      message: `Field '${field}' doesn't exist on type '${type}'`,
      extensions: { code: 'undefinedField', typeName: type, fieldName: field },
    }),
  },
  {
    pattern: /^Unknown argument "(\w+)" on field "\w+\.(\w+)"\./,
    rewrite: ([, argument, field]) => ({
      message: `Field '${field}' doesn't accept argument '${argument}'`,
      extensions: { code: 'argumentNotAccepted', name: field, typeName: 'Field', argumentName: argument },
    }),
  },
  {
    pattern: /^Field "\w+\.(\w+)" argument "(\w+)" of type "[^"]+" is required, but it was not provided\./,
    rewrite: ([, field, argument]) => ({
      message: `Field '${field}' is missing required arguments: ${argument}`,
      extensions: { code: 'missingRequiredArguments', className: 'Field', name: field, arguments: argument },
    }),
  },
  {
    pattern: /^Field "(\w+)" of type "([^"]+)" must have a selection of subfields\./,
    rewrite: ([, field, type]) => ({
      message: `Field must have selections (field '${field}' returns ${(type ?? '').replace(/[[\]!]/g, '')} but has no selections. Did you mean '${field} { ... }'?)`,
      extensions: {
        code: 'selectionMismatch',
        nodeName: `field '${field}'`,
        typeName: (type ?? '').replace(/[[\]!]/g, ''),
      },
    }),
  },
  {
    pattern: /^Field "(\w+)" must not have a selection since type "([^"]+)" has no subfields\./,
    rewrite: ([, field, type]) => ({
      message: `Selections can't be made on scalars (field '${field}' returns ${type} but has selections)`,
      extensions: { code: 'selectionMismatch', nodeName: `field '${field}'`, typeName: type },
    }),
  },
  {
    pattern: /^Unknown type "(\w+)"\./,
    rewrite: ([, type]) => ({
      message: `No such type ${type}, so it can't be used`,
      extensions: { code: 'undefinedType', typeName: type },
    }),
  },
  {
    pattern: /^Variable "\$(\w+)" is not defined/,
    rewrite: ([, variable], operationName) => ({
      message: `Variable $${variable} is used by ${operationName} but not declared`,
      extensions: { code: 'variableNotDefined', variableName: variable },
    }),
  },
  {
    pattern: /^Variable "\$(\w+)" is never used/,
    rewrite: ([, variable], operationName) => ({
      message: `Variable $${variable} is declared by ${operationName} but not used`,
      extensions: { code: 'variableNotUsed', variableName: variable },
    }),
  },
];

export function toShopifyValidationError(error: GraphQLError, document: DocumentNode): ShopifyGraphqlError {
  const node = error.nodes?.[0];
  const path = node ? pathTo(document, node) : undefined;
  const operationName = path?.[0] ?? 'anonymous query';
  let message = error.message;
  let extensions: Record<string, unknown> = { code: 'GRAPHQL_VALIDATION_FAILED' };
  for (const { pattern, rewrite } of REWRITES) {
    const match = pattern.exec(error.message);
    if (match) {
      ({ message, extensions } = rewrite(match, String(operationName)));
      break;
    }
  }
  const shaped: ShopifyGraphqlError = { message };
  if (error.locations) shaped.locations = error.locations.map(({ line, column }) => ({ line, column }));
  if (path) shaped.path = path;
  shaped.extensions = extensions;
  return shaped;
}

/** graphql-ruby's path: "query Name" (or "mutation", "fragment F"), then field names and argument names. */
function pathTo(document: DocumentNode, target: ASTNode): string[] | undefined {
  let found: string[] | undefined;
  visit(document, {
    enter(node, _key, _parent, _path, ancestors) {
      if (node !== target) return undefined;
      const chain = [...ancestors, node].filter(
        (entry): entry is ASTNode =>
          !Array.isArray(entry) && typeof entry === 'object' && entry !== null && 'kind' in entry,
      );
      found = chain.flatMap((entry) => {
        switch (entry.kind) {
          case Kind.OPERATION_DEFINITION:
            return [entry.name ? `${entry.operation} ${entry.name.value}` : entry.operation];
          case Kind.FRAGMENT_DEFINITION:
            return [`fragment ${entry.name.value}`];
          case Kind.FIELD:
            return [entry.alias?.value ?? entry.name.value];
          case Kind.ARGUMENT:
          case Kind.OBJECT_FIELD:
            return [entry.name.value];
          case Kind.INLINE_FRAGMENT:
            return [entry.typeCondition ? `... on ${entry.typeCondition.name.value}` : '...'];
          default:
            return [];
        }
      });
      return BREAK;
    },
  });
  return found;
}
