package httpapi

// table is the route table: every API operation, in the order the OpenAPI
// document lists them. Adding an endpoint is one entry in one group.
func (s *Server) table() []Route {
	var out []Route
	for _, group := range [][]Route{
		s.systemRoutes(),
		s.authRoutes(),
		s.oidcRoutes(),
		s.userRoutes(),
		s.settingRoutes(),
		s.providerRoutes(),
		s.chatgptRoutes(),
		s.agentRoutes(),
		s.mcpRoutes(),
		s.skillRoutes(),
		s.memoryRoutes(),
		s.guardrailRoutes(),
		s.sessionRoutes(),
		s.searchRoutes(),
		s.auditRoutes(),
		s.usageRoutes(),
		s.runRoutes(),
		s.attachmentRoutes(),
		s.traceRoutes(),
		s.approvalRoutes(),
		s.taskRoutes(),
		s.workflowRoutes(),
		s.triggerRoutes(),
		s.sandboxRoutes(),
		s.projectRoutes(),
	} {
		out = append(out, group...)
	}
	return out
}
