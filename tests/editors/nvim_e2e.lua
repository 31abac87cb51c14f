-- End-to-end: real Neovim with editors/neovim opens a YAML file, waits for
-- mblint's diagnostics, applies the preferred quick fix of RULE and checks
-- the buffer text and that the diagnostic is gone. Writes "PASS" or
-- "FAIL: why" to $MBLINT_RESULT, then quits.
--   env: MBLINT_REPO, MBLINT_BIN, MBLINT_FILE, MBLINT_RULE, MBLINT_EXPECT (a line the fix produces), MBLINT_RESULT
local env = vim.env
local rule = env.MBLINT_RULE

local function finish(result)
  local file = io.open(env.MBLINT_RESULT, 'w')
  file:write(result .. '\n')
  file:close()
  vim.cmd('qall!')
end

local function rule_of(d)
  if d.code then return d.code end
  local lsp = d.user_data and d.user_data.lsp
  return lsp and lsp.code
end

local function diagnostics_of_rule()
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    if d.source == 'mblint' and rule_of(d) == rule then table.insert(found, d) end
  end
  return found
end

local ok, err = pcall(function()
  vim.cmd('filetype on')
  vim.opt.runtimepath:prepend(env.MBLINT_REPO .. '/editors/neovim')
  require('mblint').setup({ cmd = { env.MBLINT_BIN, 'lsp' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(env.MBLINT_FILE))
  if not vim.wait(20000, function() return #diagnostics_of_rule() > 0 end, 20) then
    return finish('FAIL: no ' .. rule .. ' diagnostic from mblint (clients: ' .. #vim.lsp.get_active_clients() .. ')')
  end
  local d = diagnostics_of_rule()[1]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(0) },
    range = { start = { line = d.lnum, character = 0 }, ['end'] = { line = d.lnum + 1, character = 0 } },
    context = { diagnostics = {} },
  }
  local responses = vim.lsp.buf_request_sync(0, 'textDocument/codeAction', params, 10000)
  local chosen
  for _, response in pairs(responses or {}) do
    for _, action in ipairs(response.result or {}) do
      local code = action.diagnostics and action.diagnostics[1] and action.diagnostics[1].code
      if code == rule and action.isPreferred then chosen = action end
    end
  end
  if not chosen then return finish('FAIL: no preferred quick fix for ' .. rule) end
  vim.lsp.util.apply_workspace_edit(chosen.edit, 'utf-16')
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  if not text:find(env.MBLINT_EXPECT, 1, true) then
    return finish('FAIL: the buffer after the fix lacks "' .. env.MBLINT_EXPECT .. '":\n' .. text)
  end
  if not vim.wait(20000, function() return #diagnostics_of_rule() == 0 end, 20) then
    return finish('FAIL: ' .. rule .. ' still reported after the fix')
  end
  finish('PASS ' .. chosen.title)
end)
if not ok then finish('FAIL: ' .. tostring(err)) end
