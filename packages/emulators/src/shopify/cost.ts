/**
 * Shopify's calculated query cost (shopify.dev, "API rate limits" → "Cost calculation"):
 * scalars and enums cost 0, each object 1, a connection 2 plus `first` (or `last`) times the cost of one
 * node, each mutation field 10. The requested cost is computed from the document before execution; the
 * actual cost walks the result, so a connection that returned 3 of 50 nodes costs 2 + 3 × node.
 *
 * Simplifications: fragments on different concrete types are summed (Shopify takes the maximum), and a
 * plain list of objects costs one object unless it takes a `first` argument.
 */
import {
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';

export const MUTATION_FIELD_COST = 10;
export const MAX_SINGLE_QUERY_COST = 1000;

interface CostContext {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
}

interface CollectedField {
  node: FieldNode;
  parent: GraphQLCompositeType;
}

export function operationCost(
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
  data?: unknown,
): number {
  const rootType = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (!rootType) return 0;
  const ctx: CostContext = { schema, fragments, variables: withDefaults(operation, variables) };
  if (operation.operation === 'mutation') {
    return (
      collect(ctx, operation.selectionSet, rootType).filter((f) => !f.node.name.value.startsWith('__')).length *
      MUTATION_FIELD_COST
    );
  }
  return selectionCost(ctx, operation.selectionSet, rootType, data, data !== undefined);
}

function withDefaults(operation: OperationDefinitionNode, variables: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (definition.defaultValue?.kind === Kind.INT) merged[name] = Number(definition.defaultValue.value);
  }
  return { ...merged, ...variables };
}

function collect(
  ctx: CostContext,
  selectionSet: SelectionSetNode,
  parent: GraphQLCompositeType,
  depth = 0,
): CollectedField[] {
  if (depth > 50) return [];
  const fields: CollectedField[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) fields.push({ node: selection, parent });
    else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition ? ctx.schema.getType(selection.typeCondition.name.value) : parent;
      if (condition && isCompositeType(condition))
        fields.push(...collect(ctx, selection.selectionSet, condition, depth + 1));
    } else {
      const fragment = ctx.fragments.get(selection.name.value);
      const condition = fragment ? ctx.schema.getType(fragment.typeCondition.name.value) : undefined;
      if (fragment && condition && isCompositeType(condition))
        fields.push(...collect(ctx, fragment.selectionSet, condition, depth + 1));
    }
  }
  return fields;
}

function fieldDefinition(parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (isObjectType(parent) || isInterfaceType(parent)) return parent.getFields()[name];
  return undefined;
}

function intArgument(ctx: CostContext, node: FieldNode, name: string): number | undefined {
  const argument = node.arguments?.find((arg) => arg.name.value === name);
  return argument ? intValue(ctx, argument.value) : undefined;
}

function intValue(ctx: CostContext, value: ValueNode): number | undefined {
  if (value.kind === Kind.INT) return Number(value.value);
  if (value.kind === Kind.VARIABLE) {
    const raw = ctx.variables[value.name.value];
    return typeof raw === 'number' && Number.isFinite(raw) ? raw : undefined;
  }
  return undefined;
}

function isConnectionField(definition: GraphQLField<unknown, unknown>): boolean {
  const named = getNamedType(definition.type);
  return named.name.endsWith('Connection') && definition.args.some((arg) => arg.name === 'first');
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/**
 * `data` is the result object for this selection set when computing the actual cost, undefined when
 * computing the requested cost.
 */
function selectionCost(
  ctx: CostContext,
  selectionSet: SelectionSetNode,
  parent: GraphQLCompositeType,
  data: unknown,
  actual: boolean,
): number {
  let total = 0;
  const counted = new Set<string>();
  const result = asRecord(data);
  for (const { node, parent: owner } of collect(ctx, selectionSet, parent)) {
    const name = node.name.value;
    if (name.startsWith('__')) continue;
    const definition = fieldDefinition(owner, name);
    if (!definition) continue;
    const named = getNamedType(definition.type);
    if (isLeafType(named) || !isCompositeType(named) || !node.selectionSet) continue;
    const key = node.alias?.value ?? name;
    let value: unknown;
    if (actual) {
      // Fields merged from several fragments appear once in the result: count them once.
      if (counted.has(key)) continue;
      counted.add(key);
      value = result?.[key];
      if (value === undefined || value === null) continue;
    }
    if (isConnectionField(definition)) {
      total += connectionCost(ctx, node.selectionSet, named, value, actual, node);
      continue;
    }
    const unwrapped = isNonNullType(definition.type) ? definition.type.ofType : definition.type;
    if (actual) {
      const items = Array.isArray(value) ? value : [value];
      for (const item of items)
        if (item !== null && item !== undefined) total += 1 + selectionCost(ctx, node.selectionSet, named, item, true);
    } else {
      const multiplier = isListType(unwrapped) ? (intArgument(ctx, node, 'first') ?? 1) : 1;
      total += multiplier * (1 + selectionCost(ctx, node.selectionSet, named, undefined, false));
    }
  }
  return total;
}

function connectionCost(
  ctx: CostContext,
  selectionSet: SelectionSetNode,
  connectionType: GraphQLCompositeType,
  value: unknown,
  actual: boolean,
  node: FieldNode,
): number {
  // The node type and its selections, whether asked through `edges { node }` or `nodes`.
  const nodeSelections: {
    selectionSet: SelectionSetNode;
    type: GraphQLCompositeType;
    viaEdges: boolean;
    key: string;
    nodeKey: string;
  }[] = [];
  for (const { node: field, parent } of collect(ctx, selectionSet, connectionType)) {
    const definition = fieldDefinition(parent, field.name.value);
    if (!definition || !field.selectionSet) continue;
    const key = field.alias?.value ?? field.name.value;
    if (field.name.value === 'nodes') {
      const type = getNamedType(definition.type);
      if (isCompositeType(type))
        nodeSelections.push({ selectionSet: field.selectionSet, type, viaEdges: false, key, nodeKey: '' });
    } else if (field.name.value === 'edges') {
      const edgeType = getNamedType(definition.type);
      if (!isCompositeType(edgeType)) continue;
      for (const { node: edgeField, parent: edgeParent } of collect(ctx, field.selectionSet, edgeType)) {
        const edgeDefinition = fieldDefinition(edgeParent, edgeField.name.value);
        const type = edgeDefinition ? getNamedType(edgeDefinition.type) : undefined;
        if (edgeField.name.value === 'node' && edgeField.selectionSet && type && isCompositeType(type)) {
          nodeSelections.push({
            selectionSet: edgeField.selectionSet,
            type,
            viaEdges: true,
            key,
            nodeKey: edgeField.alias?.value ?? 'node',
          });
        }
      }
    }
  }
  if (!actual) {
    const count = intArgument(ctx, node, 'first') ?? intArgument(ctx, node, 'last') ?? 0;
    const perNode = Math.max(
      1,
      ...nodeSelections.map((s) => 1 + selectionCost(ctx, s.selectionSet, s.type, undefined, false)),
    );
    return 2 + count * perNode;
  }
  const connection = asRecord(value);
  let best = 0;
  for (const selection of nodeSelections) {
    const list = connection?.[selection.key];
    if (!Array.isArray(list)) continue;
    let sum = 0;
    for (const entry of list) {
      const item = selection.viaEdges ? asRecord(entry)?.[selection.nodeKey] : entry;
      if (item !== null && item !== undefined) {
        sum += 1 + selectionCost(ctx, selection.selectionSet, selection.type, item, true);
      }
    }
    best = Math.max(best, sum);
  }
  return 2 + best;
}
